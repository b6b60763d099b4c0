import { randomUUID } from 'node:crypto';
import { describeEventLogContract } from '../contract/event-log.contract.js';
import { KurrentEventLog } from './kurrentdb-event-log.js';

/**
 * Runs against a real KurrentDB/EventStoreDB when KURRENTDB_URL is set (for example
 * `kurrentdb://127.0.0.1:2113?tls=false`); no server can be installed on every machine, so
 * without it the suite says so and runs nothing.
 */
const url = process.env['KURRENTDB_URL'];

if (url) {
  describeEventLogContract('kurrentdb', {
    async open() {
      // A namespace per test keeps tests apart on one shared database.
      const namespace = `t${randomUUID().slice(0, 8)}-`;
      const open = () => KurrentEventLog.connect({ connectionString: url, namespace });
      return { log: await open(), reopen: open, dispose: async () => undefined };
    },
  });
} else {
  console.log('SKIPPED: EventLog contract on KurrentDB: KURRENTDB_URL is not set (no KurrentDB server runs here)');
  it.todo('EventLog contract on KurrentDB (set KURRENTDB_URL to run it)');
}

it('refuses to start, promptly, when nothing answers at the URL', async () => {
  const { freePort } = await import('@feedmill/harness');
  const port = await freePort();
  const started = Date.now();
  await expect(KurrentEventLog.connect({ connectionString: `kurrentdb://127.0.0.1:${port}?tls=false` })).rejects.toThrow();
  expect(Date.now() - started).toBeLessThan(20_000);
});
