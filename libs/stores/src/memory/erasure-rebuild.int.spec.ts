import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { activitiesImportStream, activityStream, feedEvents, followStream, settingsStream, type FeedLogEvent } from '@feedmill/contracts';
import { openSealedFileLog, type EventLog } from '@feedmill/event-log';
import { activityAt } from '@feedmill/feed-models/testing';
import { MemoryContentStore } from './memory-content-store.js';
import { MemoryGraphStore } from './memory-graph-store.js';

let dir: string;
beforeEach(async () => (dir = await mkdtemp(join(tmpdir(), 'feedmill-erasure-rebuild-'))));
afterEach(() => rm(dir, { recursive: true, force: true }));

/** Applies the whole log to the stores, as a projection runner does. */
async function applyAll(log: EventLog, stores: Array<MemoryContentStore | MemoryGraphStore>): Promise<void> {
  const head = await log.headPosition();
  await new Promise<void>((resolve, reject) => {
    const subscription = log.subscribeToAll({
      onEvents: async (events) => {
        try {
          for (const store of stores) await store.apply(events);
          if (events[events.length - 1]!.position >= head) void subscription.stop().then(resolve);
        } catch (error) {
          reject(error);
        }
      },
    });
  });
}

const append = (log: EventLog, stream: string, event: FeedLogEvent) => log.appendToStream(stream, [feedEvents.encode(event)]);

it('rebuilds content and graph from the log after an erasure into exactly the state the live projections reached', async () => {
  const log = await openSealedFileLog({ dir });
  await append(log, followStream('timeline:r'), { type: 'FeedFollowed', data: { follower: 'timeline:r', target: 'user:x', time: 't' } });
  await append(log, followStream('timeline:x'), { type: 'FeedFollowed', data: { follower: 'timeline:x', target: 'user:k', time: 't' } });
  await append(log, settingsStream('user:x'), { type: 'FeedSettingsChanged', data: { feed: 'user:x', private: true, time: 't' } });
  await append(log, activityStream('user:x'), { type: 'ActivityAdded', data: { activity: activityAt('x1', 'user:x', 1, { to: ['timeline:r'], refs: ['topic:x'], foreignId: 'f' }) } });
  await append(log, activitiesImportStream('b'), { type: 'ActivitiesAdded', data: { id: 'b', activities: [activityAt('x2', 'user:x', 2), activityAt('k1', 'user:k', 3, { refs: ['topic:x'] })] } });
  await append(log, activityStream('user:x'), { type: 'ActivityUpdated', data: { id: 'x1', feed: 'user:x', time: 't', extra: { text: 'changed' } } });
  const live = [new MemoryContentStore(), new MemoryGraphStore()] as const;
  await applyAll(log, [...live]);
  await append(log, activityStream('user:x'), { type: 'FeedErased', data: { feed: 'user:x', time: 't' } });
  await append(log, activityStream('timeline:x'), { type: 'FeedErased', data: { feed: 'timeline:x', time: 't' } });
  await append(log, activityStream('user:x'), { type: 'ActivityAdded', data: { activity: activityAt('x3', 'user:x', 9) } });
  await applyAll(log, [...live]);
  await log.close();

  const reopened = await openSealedFileLog({ dir });
  const rebuilt = [new MemoryContentStore(), new MemoryGraphStore()] as const;
  await applyAll(reopened, [...rebuilt]);
  await reopened.close();
  expect((await rebuilt[0].get(['x1', 'x2', 'k1', 'x3'])).map((a) => a.id)).toEqual(['k1', 'x3']);
  expect(await rebuilt[1].counts('user:x')).toEqual({ followers: 0, following: 0 });
  for (const [index, store] of rebuilt.entries()) expect(Buffer.from(store.takeSnapshot().payload).equals(Buffer.from(live[index]!.takeSnapshot().payload))).toBe(true);
});
