import { activityStream, decodeFeedEvents, feedEvents, followStream, settingsStream, type Activity, type FeedId, type FeedLogEvent } from '@feedmill/contracts';
import { fanOutBatch, FollowerIndex, type PlanLookups } from '@feedmill/feed-models';
import type { RecordedEvent } from '@feedmill/event-log';
import { MemoryContentStore } from '../memory/memory-content-store.js';
import { MemoryGraphStore } from '../memory/memory-graph-store.js';
import type { MemoryProjection } from '../memory/memory-projection.js';
import { MemoryTimelineStore } from '../memory/memory-timeline-store.js';
import type { TimelinePolicy } from '../ports.js';
import { seededRandom } from '@feedmill/feed-models/testing';
import type { PullScope } from '@feedmill/feed-models';
import { SnapshotCorruptError, SnapshotMismatchError } from './snapshot-file.js';
import { SnapshotReader, SnapshotWriter } from './snapshot-sections.js';
import { allSteps } from './snapshottable.js';

const users: FeedId[] = Array.from({ length: 12 }, (_, i): FeedId => `user:u${i}`);
const timelines: FeedId[] = Array.from({ length: 30 }, (_, i): FeedId => `timeline:t${i}`);
const slices = Array.from({ length: 8 }, (_, i) => `applicant:${i}`);
const time = (i: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString();

/** A log that adds, bumps, updates and removes activities, and follows and unfollows, singly and in batches. */
function generateLog(count: number, seed: number): RecordedEvent[] {
  const next = seededRandom(seed);
  const pick = <T>(items: readonly T[]) => items[Math.floor(next() * items.length)]!;
  const revisions = new Map<string, number>();
  const live: Activity[] = [];
  const log: RecordedEvent[] = [];
  const record = (stream: string, event: FeedLogEvent) => {
    const revision = (revisions.get(stream) ?? -1) + 1;
    revisions.set(stream, revision);
    log.push({ stream, revision, position: log.length + 1, ...feedEvents.encode(event), metadata: {}, recordedAt: time(log.length) });
  };
  for (let i = 0; log.length < count; i++) {
    const roll = next();
    if (roll < 0.35) {
      const feed = pick(users);
      const activity: Activity = {
        id: `a${i}`,
        feed,
        actor: feed,
        verb: 'post',
        object: `o${i}`,
        time: time(Math.floor(next() * 5_000)),
        ...(next() < 0.3 ? { foreignId: `f${i % 40}` } : {}),
        ...(next() < 0.2 ? { extra: { n: i, tags: ['a', 'ü'], nested: { ok: true } } } : {}),
        ...(next() < 0.2 ? { to: [...new Set([pick(timelines), pick(timelines)])] } : {}),
        ...(next() < 0.3 ? { refs: [...new Set([pick(slices), pick(slices)])] } : {}),
      };
      // Foreign ids repeat: only the first of a feed and foreign id is added, as the service decides.
      if (activity.foreignId && live.some((a) => a.feed === feed && a.foreignId === activity.foreignId)) continue;
      live.push(activity);
      record(activityStream(feed), { type: 'ActivityAdded', data: { activity } });
    } else if (roll < 0.45 && live.length > 0) {
      const activity = pick(live);
      record(activityStream(activity.feed), { type: 'ActivityBumped', data: { id: activity.id, feed: activity.feed, time: time(6_000 + i) } });
    } else if (roll < 0.49 && live.length > 0) {
      const activity = pick(live);
      const extra = next() < 0.5 ? { extra: { edit: i, note: 'é' } } : {};
      record(activityStream(activity.feed), { type: 'ActivityUpdated', data: { id: activity.id, feed: activity.feed, time: time(7_000 + i), object: `edited ${i}`, ...extra } });
    } else if (roll < 0.55 && live.length > 0) {
      const activity = live.splice(Math.floor(next() * live.length), 1)[0]!;
      const to = activity.to === undefined ? {} : { to: activity.to };
      record(activityStream(activity.feed), { type: 'ActivityRemoved', data: { id: activity.id, feed: activity.feed, time: time(6_000 + i), ...to } });
    } else if (roll < 0.8) {
      // Some follows are bounded (a copy limit), some unfollows keep the history.
      const follower = pick(timelines);
      const data = { follower, target: pick(users), time: time(i) };
      if (next() < 0.75) record(followStream(follower), { type: 'FeedFollowed', data: next() < 0.3 ? { ...data, since: `${time(Math.floor(next() * 5_000))}|a` } : data });
      else record(followStream(follower), { type: 'FeedUnfollowed', data: next() < 0.4 ? { ...data, keepHistory: true } : data });
    } else if (roll < 0.84) {
      // Follow requests of private feeds, and the feeds' privacy.
      const follower = pick(timelines);
      record(followStream(follower), { type: next() < 0.7 ? 'FollowRequested' : 'FollowRequestRejected', data: { follower, target: pick(users), time: time(i) } });
    } else if (roll < 0.85) {
      const feed = pick(users);
      record(settingsStream(feed), { type: 'FeedSettingsChanged', data: { feed, private: next() < 0.6, time: time(i) } });
    } else {
      const follows = Array.from({ length: 5 }, () => [pick(timelines), pick(users)] as [FeedId, FeedId]);
      record(`import-follows-b${i}`, { type: 'FeedsFollowed', data: { id: `b${i}`, time: time(i), follows } });
    }
  }
  return log;
}

async function contentView(store: MemoryContentStore, log: readonly RecordedEvent[]) {
  const view: unknown[] = [];
  for (const feed of users) {
    view.push(await store.recent([feed], undefined, 1_000, undefined, 'time'));
    view.push(await store.recent([feed], undefined, 1_000, undefined, 'relevance'));
    view.push(await store.recent([feed], undefined, 1_000, Math.floor(log.length / 2)));
    for (let f = 0; f < 40; f++) view.push(await store.byForeignId(feed, `f${f}`));
  }
  view.push(await store.recent(users, time(2_500), 50));
  // Bounded feeds: a follow's since, and a kept history's end.
  const bounds = [
    { feed: users[0]!, since: time(2_000), followedAt: Math.floor(log.length / 3) },
    { feed: users[1]!, unfollowedAt: Math.floor(log.length / 2) },
  ];
  view.push(await store.recent(users, undefined, 200, undefined, 'time', bounds));
  view.push(await store.recent(users, undefined, 200, undefined, 'relevance', bounds));
  // What was addressed to the timelines, alone and with the feeds.
  for (const reader of timelines) {
    view.push(await store.recent([reader], undefined, 1_000, undefined, 'time'));
    view.push(await store.recent([reader, users[0]!, users[1]!], undefined, 1_000, undefined, 'relevance'));
  }
  // Slices, whole and from a key on.
  for (const ref of slices) view.push(await store.slice(ref, undefined, 1_000), await store.slice(ref, `${time(2_500)}|a`, 20));
  return view;
}

async function graphView(store: MemoryGraphStore) {
  const view: unknown[] = [];
  for (const feed of [...users, ...timelines]) {
    view.push(await store.followers(feed, undefined, 1_000), await store.following(feed, undefined, 1_000), await store.counts(feed));
    view.push(await store.followers(feed, 'timeline:t15', 3), await store.isFollowing(feed, users[0]!));
    view.push(await store.requests(feed, undefined, 1_000), await store.isPrivate(feed), await store.edgeState(feed, users[1]!));
    view.push(await store.boundsOf(feed));
  }
  return view;
}

async function revisionsOf(store: MemoryProjection, log: readonly RecordedEvent[]) {
  const streams = [...new Set(log.map((e) => e.stream))];
  return Promise.all(streams.map(async (stream) => [stream, await store.streamRevision(stream)]));
}

const batches = (events: readonly RecordedEvent[], size = 37) => Array.from({ length: Math.ceil(events.length / size) }, (_, i) => events.slice(i * size, (i + 1) * size));

describe.each([
  { name: 'content', make: () => new MemoryContentStore(), view: (s: MemoryProjection, log: readonly RecordedEvent[]) => contentView(s as MemoryContentStore, log) },
  { name: 'graph', make: () => new MemoryGraphStore(), view: (s: MemoryProjection) => graphView(s as MemoryGraphStore) },
])('$name store: a snapshot and the log tail', ({ make, view }) => {
  const log = generateLog(3_000, 7);

  it.each([0, 1, 1_000, 2_999, 3_000])('reach the state a full replay reaches (snapshot after %i events)', async (cut) => {
    const full = make();
    for (const batch of batches(log)) await full.apply(batch);

    const before = make();
    for (const batch of batches(log.slice(0, cut))) await before.apply(batch);
    // The service applies its own appends before the subscription reaches them: the snapshot
    // holds them while its position is still before them, and the tail brings them again.
    const own = log.slice(cut, cut + 5);
    for (const event of own) await before.applyOwn(event, feedEvents.decode(event)!);
    const snapshot = before.takeSnapshot();
    expect(snapshot.position).toBe(cut);

    const restored = make();
    restored.restoreSnapshot({ position: snapshot.position, payload: Uint8Array.from(snapshot.payload) });
    expect(await restored.position()).toBe(cut);
    for (const batch of batches(log.filter((e) => e.position > snapshot.position))) await restored.apply(batch);

    expect(await restored.position()).toBe(await full.position());
    // The same JSON too: restored activities have their fields in the order evolved ones do.
    expect(JSON.stringify(await view(restored, log))).toBe(JSON.stringify(await view(full, log)));
    expect(await revisionsOf(restored, log)).toEqual(await revisionsOf(full, log));
  });

  it('holds its writes while a snapshot is taken in steps: the snapshot is of one position, and they apply after it', async () => {
    const store = make();
    await store.apply(log.slice(0, 1_000));
    const steps = store.snapshotSteps();
    expect(steps.next().done).toBe(false);
    let applied = false;
    const applying = Promise.all([store.apply(log.slice(1_000, 2_000)), store.applyOwn(log[2_000]!, feedEvents.decode(log[2_000]!)!)]).then(() => (applied = true));
    await new Promise(setImmediate);
    expect(applied).toBe(false);
    const snapshot = allSteps(steps);
    expect(snapshot.position).toBe(1_000);
    await applying;
    expect(await store.position()).toBe(2_000);
    const restored = make();
    restored.restoreSnapshot(snapshot);
    const twin = make();
    await twin.apply(log.slice(0, 1_000));
    expect(JSON.stringify(await view(restored, log))).toBe(JSON.stringify(await view(twin, log)));
  });

  it('refuses to restore over a projection that applied events', async () => {
    const store = make();
    await store.apply(log.slice(0, 10));
    expect(() => store.restoreSnapshot(make().takeSnapshot())).toThrow(/empty/);
  });
});

describe('content store snapshot', () => {
  it('refuses a snapshot of the layout before refs (no layout name), and stays empty', async () => {
    const log = generateLog(200, 3);
    const full = new MemoryContentStore();
    await full.apply(log);
    const { position, payload } = full.takeSnapshot();
    // The older layout: the same sections without the layout name (revisions, then the activities' columns).
    const reader = new SnapshotReader(payload);
    const streams = reader.strings();
    const revisions = reader.float64s();
    reader.strings();
    const older = new SnapshotWriter().strings(streams).float64s(revisions).uint8s(new Uint8Array(0)).finish();
    const restored = new MemoryContentStore();
    expect(() => restored.restoreSnapshot({ position, payload: older })).toThrow(new SnapshotMismatchError('its layout is an older one, not content/3'));
    expect(await restored.position()).toBe(0);
    expect(await restored.slice('applicant:1', undefined, 10)).toEqual([]);
  });
});

describe('graph store snapshot', () => {
  it('keeps paging order for feed ids that sort differently by code unit and case-blind', async () => {
    const feeds: FeedId[] = ['user:B', 'user:a', 'user:Z9', 'user:0', 'user:aB', 'user:Ab', 'user:b-1'];
    const store = new MemoryGraphStore();
    await store.apply(feeds.map((target, i) => ({ stream: followStream('timeline:x'), revision: i, position: i + 1, ...feedEvents.encode({ type: 'FeedFollowed', data: { follower: 'timeline:x', target, time: time(i) } }), metadata: {}, recordedAt: time(i) })));
    const restored = new MemoryGraphStore();
    restored.restoreSnapshot(store.takeSnapshot());
    expect(await restored.following('timeline:x', undefined, 10)).toEqual(await store.following('timeline:x', undefined, 10));
    expect(await restored.following('timeline:x', 'user:B', 10)).toEqual(await store.following('timeline:x', 'user:B', 10));
  });
});

describe('graph store snapshot with own events ahead of it', () => {
  it('keeps a follow appended after an erasure the snapshot had not reached, when the tail brings the erasure', async () => {
    const record = (stream: string, position: number, revision: number, event: FeedLogEvent): RecordedEvent => ({ stream, revision, position, ...feedEvents.encode(event), metadata: {}, recordedAt: time(position) });
    const before = record(followStream('timeline:m'), 1, 0, { type: 'FeedFollowed', data: { follower: 'timeline:m', target: 'user:x', time: time(1) } });
    const erasure = record(activityStream('user:x'), 2, 0, { type: 'FeedErased', data: { feed: 'user:x', time: time(2) } });
    const refollow = record(followStream('timeline:n'), 3, 0, { type: 'FeedFollowed', data: { follower: 'timeline:n', target: 'user:x', time: time(3) } });
    const store = new MemoryGraphStore();
    await store.apply([before]);
    await store.applyOwn(refollow, feedEvents.decode(refollow)!);
    const snapshot = store.takeSnapshot();
    expect(snapshot.position).toBe(1);
    const restored = new MemoryGraphStore();
    restored.restoreSnapshot({ position: snapshot.position, payload: Uint8Array.from(snapshot.payload) });
    await restored.apply([erasure, refollow]);
    expect(await restored.followers('user:x', undefined, 10)).toEqual(['timeline:n']);
    // With nothing ahead, the snapshot holds no such section, and one restored from it reads as before.
    const settled = restored.takeSnapshot();
    const again = new MemoryGraphStore();
    again.restoreSnapshot(settled);
    expect(await again.followers('user:x', undefined, 10)).toEqual(['timeline:n']);
  });
});

describe('timeline store: a snapshot and the log tail', () => {
  const log = generateLog(3_000, 11);
  // Four kinds of reader: ring by time, ring by relevance holding references, caches, and
  // hybrid timelines whose edges change sides after a few reads or posts.
  const policyOf = (reader: FeedId): TimelinePolicy => {
    const n = Number(reader.slice('timeline:t'.length));
    if (n < 10) return { model: 'ring', cap: 5, inactivityMs: 0 };
    if (n < 20) return { model: 'ring', cap: 8, inactivityMs: 0, relevancy: true, embed: false };
    if (n < 25) return { model: 'cache', cap: 6, inactivityMs: 3_600_000 };
    return { model: 'hybrid', cap: 5, inactivityMs: 0, relevancy: n % 2 === 0, hybrid: { readsPerPost: 0.5, windowMs: 600_000, hysteresis: 1.5 } };
  };
  /** Within the log's times, so that reads weigh as much as the posts around them. */
  const now = () => Date.UTC(2026, 0, 1, 0, 40);
  const content = new MemoryContentStore();
  const graph = new MemoryGraphStore();
  const lookups: PlanLookups = {
    recent: (feed, limit, _atLeast, atMost, order, since) => content.recent([feed], undefined, limit, atMost, order, since === undefined ? undefined : [{ feed, since }]),
    isTimeline: (feed) => feed.startsWith('timeline:'),
    capOf: (reader) => policyOf(reader).cap,
    orderOf: (reader) => (policyOf(reader).relevancy ? 'relevance' : 'time'),
    activities: (ids) => content.get(ids),
    positions: (ids) => content.positionsOf(ids),
    follows: (follower, target) => graph.isFollowing(follower, target),
  };
  const pull = (reader: FeedId) => async (before: string | undefined, limit: number, scope?: PullScope) => {
    const bounds = await graph.boundsOf(reader);
    // As the timeline service pulls: the feeds followed and those kept, within their bounds; the reader's own feed brings what was addressed to it.
    const following = [...(await graph.following(reader, undefined, 1_000)), ...bounds.filter((bound) => bound.unfollowedAt !== undefined).map((bound) => bound.feed)];
    const feeds = !scope ? [reader, ...following] : 'only' in scope ? [...scope.only] : [reader, ...following.filter((feed) => !scope.except.includes(feed))];
    return content.recent(feeds, before, limit, undefined, policyOf(reader).relevancy ? 'relevance' : 'time', bounds);
  };
  beforeAll(async () => {
    await content.apply(log);
    await graph.apply(log);
  });

  async function fanOut(store: MemoryTimelineStore, followers: FollowerIndex, events: readonly RecordedEvent[]) {
    for (const batch of batches(events)) {
      const last = batch[batch.length - 1]!.position;
      const reply = await fanOutBatch(decodeFeedEvents(batch), followers, lookups, store, await store.position(), last);
      expect(reply.applied).toBe(true);
    }
  }

  async function view(store: MemoryTimelineStore) {
    const pages: unknown[] = [];
    for (const reader of timelines) {
      const first = await store.readPage(reader, undefined, 4, pull(reader));
      const all = await store.readPage(reader, undefined, 100, pull(reader));
      pages.push(reader, first, all, first.next === null ? null : await store.readPage(reader, first.next, 100, pull(reader)));
    }
    return pages;
  }

  it('holds deliveries while a snapshot is taken in steps and answers reads between them: the snapshot is of one position', async () => {
    const store = new MemoryTimelineStore(policyOf, now, 'config A');
    const followers = new FollowerIndex();
    await fanOut(store, followers, log.slice(0, 1_500));
    const twin = new MemoryTimelineStore(policyOf, now, 'config A');
    await fanOut(twin, new FollowerIndex(), log.slice(0, 1_500));
    const steps = store.snapshotSteps();
    expect(steps.next().done).toBe(false);
    let delivered = false;
    const delivering = fanOut(store, followers, log.slice(1_500)).then(() => (delivered = true));
    for (const reader of timelines) await store.readPage(reader, undefined, 3, pull(reader));
    await new Promise(setImmediate);
    expect(delivered).toBe(false);
    const snapshot = allSteps(steps);
    expect(snapshot.position).toBe(1_500);
    await delivering;
    expect(await store.position()).toBe(3_000);
    const restored = new MemoryTimelineStore(policyOf, now, 'config A');
    restored.restoreSnapshot(snapshot);
    for (const reader of timelines.slice(0, 20)) expect([reader, await restored.size(reader)]).toEqual([reader, await twin.size(reader)]);
  });

  it.each([1, 1_000, 2_999, 3_000])('reach the state a full replay reaches, reads and sizes alike (snapshot after %i events)', async (cut) => {
    const full = new MemoryTimelineStore(policyOf, now, 'config A');
    await fanOut(full, new FollowerIndex(), log);
    const before = new MemoryTimelineStore(policyOf, now, 'config A');
    const followers = new FollowerIndex();
    // The same as `before`, without a snapshot: what the restored store must be after the tail.
    const twin = new MemoryTimelineStore(policyOf, now, 'config A');
    const twinFollowers = new FollowerIndex();
    for (const [store, index] of [[before, followers], [twin, twinFollowers]] as const) {
      await fanOut(store, index, log.slice(0, cut));
      // Caches built by reads before the snapshot, which the tail then keeps; hybrid readers
      // that read often, seldom and never.
      for (const reader of timelines.slice(20, 25)) await store.readPage(reader, undefined, 3, pull(reader));
      for (const [index, reader] of timelines.slice(25).entries()) for (let read = 0; read < [40, 40, 4, 1, 0][index]!; read++) await store.readPage(reader, undefined, 3, pull(reader));
    }
    const snapshot = before.takeSnapshot();
    expect(snapshot.position).toBe(cut);
    const restored = new MemoryTimelineStore(policyOf, now, 'config A');
    restored.restoreSnapshot({ position: snapshot.position, payload: Uint8Array.from(snapshot.payload) });
    expect(await restored.position()).toBe(cut);
    expect(restored.storedVersions()).toBeLessThanOrEqual(before.storedVersions());
    await fanOut(restored, followers, log.slice(cut));
    expect(await restored.position()).toBe(await full.position());
    for (const reader of timelines.slice(0, 20)) expect([reader, await restored.size(reader)]).toEqual([reader, await full.size(reader)]);
    // Counters are compared with the twin below: reads before the snapshot make hybrid
    // readers push, trim and so store (and count) otherwise than a store never read.
    // Hybrid edges take their sides from reads, which the log does not hold: the snapshot
    // keeps them, so that the restored store stores what the one that never stopped does.
    await fanOut(twin, twinFollowers, log.slice(cut));
    for (const reader of timelines) expect([reader, await restored.size(reader)]).toEqual([reader, await twin.size(reader)]);
    expect(await restored.counters()).toEqual(await twin.counters());
    expect(JSON.stringify(await view(restored))).toBe(JSON.stringify(await view(full)));
    expect(await view(twin)).toEqual(await view(full));
  });

  it('refuses a snapshot taken under another feed config, and stays empty', async () => {
    const store = new MemoryTimelineStore(policyOf, undefined, 'config A');
    await fanOut(store, new FollowerIndex(), log.slice(0, 500));
    const other = new MemoryTimelineStore(policyOf, undefined, 'config B');
    expect(() => other.restoreSnapshot(store.takeSnapshot())).toThrow(new SnapshotMismatchError('it was taken under another feed config'));
    expect(await other.position()).toBe(0);
    expect((await other.counters()).timelines).toBe(0);
  });

  it('refuses a snapshot whose timelines do not hold together, and stays empty', async () => {
    const store = new MemoryTimelineStore(policyOf, undefined, 'config A');
    await fanOut(store, new FollowerIndex(), log.slice(0, 500));
    // The same snapshot read with smaller caps: a timeline holds more than its cap allows.
    const smaller = new MemoryTimelineStore((reader) => ({ ...policyOf(reader), cap: 1 }), undefined, 'config A');
    expect(() => smaller.restoreSnapshot(store.takeSnapshot())).toThrow(SnapshotCorruptError);
    expect((await smaller.counters()).timelines).toBe(0);
  });
});
