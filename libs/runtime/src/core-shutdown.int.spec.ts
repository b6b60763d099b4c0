import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NestFactory } from '@nestjs/core';
import { defaultFeedConfig } from '@feedmill/contracts';
import { FileEventLog, type EventLog } from '@feedmill/event-log';
import type { RealtimeBus, ServiceClient } from '@feedmill/transport';
import { CoreModule } from './core.module.js';
import { memoryStores, type StoreFactory } from './store-factory.js';

/**
 * Shutdown closes the realtime bus, the service client, the log and the stores in that order,
 * each whatever became of the one before: a process whose NATS is gone must still release its
 * log and write its stores' last snapshots. The parts that fail here are stand-ins whose only
 * job is to fail their close; the log is a real file log, whose directory lock shows whether
 * it was closed.
 */
let dir: string;
beforeEach(async () => (dir = await mkdtemp(join(tmpdir(), 'feedmill-shutdown-'))));
afterEach(() => rm(dir, { recursive: true, force: true }));

const failingClose = (what: string) => ({ close: () => Promise.reject(new Error(`${what} is gone`)) });

/** Memory stores whose close is counted. */
function countedStores(): StoreFactory & { closed: number } {
  const stores = { ...memoryStores, closed: 0 };
  stores.close = async () => {
    stores.closed++;
  };
  return stores;
}

/** Closes an app of the core module on these parts, and returns the warnings it logged. */
async function closedApp(options: { eventLog: EventLog; stores: StoreFactory; failingBusAndClient: boolean }): Promise<string[]> {
  const warnings: string[] = [];
  const quiet = () => undefined;
  const app = await NestFactory.createApplicationContext(
    CoreModule.forRoot({
      feedConfig: defaultFeedConfig,
      eventLog: options.eventLog,
      stores: options.stores,
      ...(options.failingBusAndClient && { realtimeBus: failingClose('the bus') as unknown as RealtimeBus, client: failingClose('NATS') as unknown as ServiceClient }),
    }),
    { logger: { log: quiet, error: quiet, warn: (message: unknown) => void warnings.push(String(message)) } },
  );
  await app.close();
  return warnings;
}

describe('core shutdown', () => {
  it('closes the log and the stores when closing the realtime bus and the service client fails, and names each failure', async () => {
    const stores = countedStores();
    const warnings = await closedApp({ eventLog: await FileEventLog.open({ dir }), stores, failingBusAndClient: true });
    expect(stores.closed).toBe(1);
    // The directory lock was let go: the log was closed.
    const reopened = await FileEventLog.open({ dir });
    await reopened.close();
    expect(warnings).toEqual(['closing the realtime bus failed: the bus is gone', 'closing the service client failed: NATS is gone']);
  });

  it('closes the stores when closing the log fails', async () => {
    const log = await FileEventLog.open({ dir });
    try {
      const failingLog = Object.assign(Object.create(log) as EventLog, failingClose('the disk'));
      const stores = countedStores();
      const warnings = await closedApp({ eventLog: failingLog, stores, failingBusAndClient: false });
      expect(stores.closed).toBe(1);
      expect(warnings).toEqual(['closing the log failed: the disk is gone']);
    } finally {
      await log.close();
    }
  });
});
