import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEAD_LETTER_STREAM, openDeadLetters } from '@feedmill/contracts';
import { FileEventLog, JetStreamEventLog, type EventLog } from '@feedmill/event-log';
import { startNatsServer, type NatsServerHandle } from '@feedmill/harness';
import { DeadLetterEventNotFoundError, ReaderDeadLetters } from './reader-dead-letters.js';
import { recordedEventAt } from './recorded-event-at.js';

let nats: NatsServerHandle;
let streams = 0;
beforeAll(async () => {
  nats = await startNatsServer();
});
afterAll(async () => {
  await nats.stop();
});

/** A log of each kind timeline runs on: the file log (standalone) and JetStream (cluster). */
const logs: Array<[string, () => Promise<{ log: EventLog; dispose: () => Promise<void> }>]> = [
  [
    'file',
    async () => {
      const dir = await mkdtemp(join(tmpdir(), 'feedmill-reader-letters-'));
      const log = await FileEventLog.open({ dir });
      return { log, dispose: async () => (await log.close(), await rm(dir, { recursive: true, force: true })) };
    },
  ],
  [
    'jetstream',
    async () => {
      const log = await JetStreamEventLog.connect({ servers: nats.url, streamName: `READERLETTERS${++streams}` });
      return { log, dispose: () => log.close() };
    },
  ],
];

describe.each(logs)('on the %s log', (_name, open) => {
  let log: EventLog;
  let dispose: () => Promise<void>;
  let positions: number[];
  beforeEach(async () => {
    ({ log, dispose } = await open());
    positions = [];
    for (const [stream, type] of [['feed-user:a', 'First'], ['follows-timeline:r', 'Second'], ['feed-user:a', 'Third']] as const) {
      positions.push((await log.appendToStream(stream, [{ type, data: {} }])).position);
    }
  });
  afterEach(() => dispose());

  it('finds the event at a position, first, middle or last, and nothing past the head', async () => {
    expect((await recordedEventAt(log, positions[0]!))?.type).toBe('First');
    expect(await recordedEventAt(log, positions[1]!)).toMatchObject({ position: positions[1], stream: 'follows-timeline:r', revision: 0, type: 'Second' });
    expect(await recordedEventAt(log, positions[2]!)).toMatchObject({ position: positions[2], stream: 'feed-user:a', revision: 1, type: 'Third' });
    expect(await recordedEventAt(log, positions[2]! + 1)).toBeUndefined();
    expect(log.openSubscriptions).toBe(0);
  });

  it('appends a reader’s letter named by its event, which lists as open with its reader', async () => {
    const letters = new ReaderDeadLetters(log, () => new Date('2026-03-01T00:00:00.000Z'));
    await letters.append({ reader: 'timeline:r', position: positions[2]!, reason: 'the entry is too large', attempts: 3 });
    expect(openDeadLetters(await log.readStream(DEAD_LETTER_STREAM))).toEqual([
      { position: positions[2], stream: 'feed-user:a', revision: 1, type: 'Third', reader: 'timeline:r', reason: 'the entry is too large', attempts: 3, time: '2026-03-01T00:00:00.000Z' },
    ]);
  });

  it('refuses a position at which the log holds no event, writing nothing', async () => {
    const letters = new ReaderDeadLetters(log);
    await expect(letters.append({ reader: 'timeline:r', position: positions[2]! + 5, reason: 'r', attempts: 3 })).rejects.toThrow(DeadLetterEventNotFoundError);
    expect(await log.readStream(DEAD_LETTER_STREAM)).toEqual([]);
  });
});
