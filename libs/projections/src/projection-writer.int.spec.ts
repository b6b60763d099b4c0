import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { activityStream, feedEvents, type Activity, type FeedEvent } from '@feedmill/contracts';
import { FileEventLog, WrongExpectedVersionError } from '@feedmill/event-log';
import { MemoryContentStore } from '@feedmill/stores';
import { ProjectionWriter } from './projection-writer.js';

const added = (id: string): FeedEvent => ({
  type: 'ActivityAdded',
  data: { activity: { id, feed: 'user:a', actor: 'a', verb: 'post', object: 'o', time: '2026-01-01T00:00:00.000Z' } satisfies Activity },
});
const stream = activityStream('user:a');

let dir: string;
let log: FileEventLog;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'feedmill-writer-'));
  log = await FileEventLog.open({ dir });
});
afterEach(async () => {
  await log.close();
  await rm(dir, { recursive: true, force: true });
});

describe('ProjectionWriter', () => {
  it('queues appends to one stream back to back and applies them in order', async () => {
    const store = new MemoryContentStore();
    const writer = new ProjectionWriter(log, store);
    const queued = [await writer.enqueue(stream, added('a1')), await writer.enqueue(stream, added('a2')), await writer.enqueue(stream, added('a3'))];
    expect(await store.streamRevision(stream)).toBe(-1); // nothing is applied before it is durable
    await Promise.all(queued.map((q) => q.durable));
    expect(await store.streamRevision(stream)).toBe(2);
    expect((await store.recent(['user:a'], undefined, 10)).map((a) => a.id).sort()).toEqual(['a1', 'a2', 'a3']);
    expect((await log.readStream(stream)).map((e) => e.revision)).toEqual([0, 1, 2]);
  });

  it('fails a queued append that another writer overtook, then decides again on the caught-up projection', async () => {
    const store = new MemoryContentStore();
    const writer = new ProjectionWriter(log, store);
    // Another writer appends; this projection has not seen it yet.
    await log.appendToStream(stream, [feedEvents.encode(added('other'))]);
    const failed = await writer.enqueue(stream, added('mine'));
    await expect(failed.durable).rejects.toBeInstanceOf(WrongExpectedVersionError);
    // The projection catches up only once the first attempt has failed, so that the first
    // attempt surely decides on the stale revision and the retry on the caught-up one.
    let firstFailed!: () => void;
    const catchUp = new Promise<void>((resolve) => (firstFailed = resolve));
    const subscription = log.subscribeToAll({ onEvents: async (events) => (await catchUp, store.apply(events)) });
    const outcomes: string[] = [];
    await writer.decideWithRetry(async () => {
      try {
        await writer.append(stream, added('mine'));
        outcomes.push('appended');
      } catch (error) {
        outcomes.push((error as Error).name);
        firstFailed();
        throw error;
      }
    });
    expect(outcomes).toEqual(['WrongExpectedVersionError', 'appended']);
    expect((await log.readStream(stream)).map((e) => (e.data as { activity: Activity }).activity.id)).toEqual(['other', 'mine']);
    await subscription.stop();
  });
});
