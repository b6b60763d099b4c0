import { activityStream, followStream, type Activity, type FeedEvent, type FeedId } from '@feedmill/contracts';
import type { RecordedEvent } from '@feedmill/event-log';
import { MemoryContentStore } from './memory-content-store.js';
import { MemoryGraphStore } from './memory-graph-store.js';
import { MemoryTimelineStore } from './memory-timeline-store.js';

const activity = (id: string, feed: FeedId, second: number): Activity => ({
  id,
  feed,
  actor: 'a',
  verb: 'post',
  object: 'o',
  time: new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString(),
});

/** Records events as a log would: positions across streams, revisions within each. */
function record(events: Array<[string, FeedEvent]>): RecordedEvent[] {
  const revisions = new Map<string, number>();
  return events.map(([stream, event], index) => {
    const revision = (revisions.get(stream) ?? -1) + 1;
    revisions.set(stream, revision);
    return { stream, revision, position: index + 1, type: event.type, data: event.data, metadata: { v: 1 }, recordedAt: 't' };
  });
}

const contentEvents = record([
  [activityStream('user:a'), { type: 'ActivityAdded', data: { activity: activity('a1', 'user:a', 1) } }],
  [activityStream('user:b'), { type: 'ActivityAdded', data: { activity: activity('b1', 'user:b', 2) } }],
  [activityStream('user:a'), { type: 'ActivityAdded', data: { activity: { ...activity('a2', 'user:a', 3), foreignId: 'f' } } }],
  [activityStream('user:b'), { type: 'ActivityAdded', data: { activity: activity('b2', 'user:b', 0) } }],
  [activityStream('user:a'), { type: 'ActivityRemoved', data: { id: 'a1', feed: 'user:a', time: 't' } }],
]);

async function contentSnapshot(store: MemoryContentStore) {
  return {
    recent: (await store.recent(['user:a', 'user:b'], undefined, 10)).map((a) => a.id),
    foreign: (await store.byForeignId('user:a', 'f'))?.id,
    removed: await store.get(['a1']),
    position: await store.position(),
  };
}

describe('MemoryContentStore', () => {
  it('changes nothing when the same events are applied twice', async () => {
    const store = new MemoryContentStore();
    await store.apply(contentEvents);
    const once = await contentSnapshot(store);
    await store.apply(contentEvents);
    for (const event of contentEvents) await store.applyOwn(event);
    expect(await contentSnapshot(store)).toEqual(once);
    expect(once).toEqual({ recent: ['a2', 'b1', 'b2'], foreign: 'a2', removed: [], position: 5 });
  });

  it('applies its own event at once but never one that skips a revision', async () => {
    const store = new MemoryContentStore();
    await store.applyOwn(contentEvents[2]!); // revision 1 of user:a before revision 0: skipped
    expect(await store.get(['a2'])).toEqual([]);
    await store.applyOwn(contentEvents[0]!);
    expect((await store.get(['a1'])).map((a) => a.id)).toEqual(['a1']);
    expect(await store.position()).toBe(0);
  });

  it('pages newest first across feeds below a key', async () => {
    const store = new MemoryContentStore();
    await store.apply(contentEvents);
    const [newest] = await store.recent(['user:a', 'user:b'], undefined, 1);
    const rest = await store.recent(['user:a', 'user:b'], `${newest!.time}|${newest!.id}`, 10);
    expect(rest.map((a) => a.id)).toEqual(['b1', 'b2']);
  });

  it('lets a query wait for a position it has not applied yet', async () => {
    const store = new MemoryContentStore();
    const waiting = store.reach(3);
    await store.apply(contentEvents.slice(0, 3));
    await expect(waiting).resolves.toBeUndefined();
  });
});

describe('MemoryGraphStore', () => {
  const events = record([
    [followStream('timeline:r'), { type: 'FeedFollowed', data: { follower: 'timeline:r', target: 'user:a', time: 't' } }],
    [followStream('timeline:r'), { type: 'FeedFollowed', data: { follower: 'timeline:r', target: 'user:b', time: 't' } }],
    [followStream('timeline:s'), { type: 'FeedFollowed', data: { follower: 'timeline:s', target: 'user:a', time: 't' } }],
    [followStream('timeline:r'), { type: 'FeedUnfollowed', data: { follower: 'timeline:r', target: 'user:b', time: 't' } }],
  ]);

  it('changes nothing when the same events are applied twice, and pages in order', async () => {
    const store = new MemoryGraphStore();
    await store.apply(events);
    await store.apply(events);
    expect(await store.followers('user:a', undefined, 10)).toEqual(['timeline:r', 'timeline:s']);
    expect(await store.followers('user:a', 'timeline:r', 10)).toEqual(['timeline:s']);
    expect(await store.following('timeline:r', undefined, 10)).toEqual(['user:a']);
    expect(await store.counts('user:a')).toEqual({ followers: 2, following: 0 });
    expect(await store.isFollowing('timeline:r', 'user:b')).toBe(false);
    expect(await store.streamRevision(followStream('timeline:r'))).toBe(2);
  });
});

describe('MemoryTimelineStore', () => {
  it('applies each delivery batch once and refuses one that does not start where it stands', async () => {
    const store = new MemoryTimelineStore(() => 3);
    const follow = { kind: 'follow' as const, reader: 'timeline:r' as const, target: 'user:a' as const, recent: [], exhausted: true };
    expect(await store.deliver({ after: 0, position: 4, deliveries: [follow] })).toEqual({ applied: true, position: 4 });
    const insert = { kind: 'insert' as const, readers: ['timeline:r' as const], activity: activity('a1', 'user:a', 1) };
    expect(await store.deliver({ after: 9, position: 10, deliveries: [insert] })).toEqual({ applied: false, position: 4 });
    expect(await store.size('timeline:r')).toBe(0);
    await store.deliver({ after: 4, position: 5, deliveries: [insert, insert] });
    expect(await store.size('timeline:r')).toBe(1);
    for (let i = 2; i <= 6; i++) {
      await store.deliver({ after: 3 + i, position: 4 + i, deliveries: [{ ...insert, activity: activity(`a${i}`, 'user:a', i) }] });
    }
    expect(await store.size('timeline:r')).toBe(3);
  });
});
