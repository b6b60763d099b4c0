import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { activityStream, feedEvents, sortKeyOf, type Activity, type FeedEvent, type FeedId, type StreamEvent } from '@feedmill/contracts';
import { FileEventLog } from '@feedmill/event-log';
import { DEFAULT_REALTIME_OPTIONS } from '@feedmill/runtime';
import { InProcessRealtimeBus } from '@feedmill/transport';
import type { PlacedGroupItem, PlacedGroupPage } from '../aggregated-reads.js';
import { RealtimeHub } from './realtime-hub.js';

/** A group of `count` likes of `object`, placed by its newest like's second. */
const likes = (object: string, count: number, second: number, seen = false): PlacedGroupItem => ({
  id: `like-${object}`,
  verb: 'like',
  object,
  activityCount: count,
  actorCount: count,
  actors: ['bob'],
  activities: [at(second)],
  time: at(second).time,
  updatedAt: at(second).time,
  seen,
  read: false,
  key: sortKeyOf(at(second)),
});

const at = (second: number): Activity => ({ id: `a${second}`, feed: 'user:bob', actor: 'bob', verb: 'post', object: `o${second}`, time: new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString() });

/**
 * The hub over a real file log and the in-process bus, with the timelines' reads played by
 * a page the test sets: what it publishes, when it reads again, and how long it keeps a feed.
 */
describe('RealtimeHub', () => {
  let dir: string;
  let log: FileEventLog;
  let hub: RealtimeHub;
  let bus: InProcessRealtimeBus;
  /** The first page each read answers, newest first. */
  let page: Activity[];
  /** The first groups each read of an aggregated feed (`alerts:alice`) answers. */
  let groups: PlacedGroupPage;
  let reads: number;
  const published: StreamEvent[] = [];

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'feedmill-realtime-hub-'));
    log = await FileEventLog.open({ dir });
    bus = new InProcessRealtimeBus();
    page = [];
    groups = { groups: [], unseen: 0, unread: 0 };
    reads = 0;
    published.length = 0;
    hub = new RealtimeHub({
      options: { ...DEFAULT_REALTIME_OPTIONS, graceMs: 150, leaseMs: 300 },
      bus,
      log,
      isTimeline: (feed) => feed.startsWith('timeline:') || feed.startsWith('alerts:'),
      isAggregated: (feed) => feed.startsWith('alerts:'),
      readFirstGroups: async () => (reads++, structuredClone(groups)),
      keyOf: () => sortKeyOf,
      readFirstPage: async () => (reads++, { items: [...page], next: null }),
      timelinePosition: async () => log.headPosition(),
      timelineReaches: async () => undefined,
      following: async () => ['user:bob'],
      warn: (message) => {
        throw new Error(message);
      },
    });
    await bus.subscribe('timeline:alice', (events) => published.push(...events));
    await bus.subscribe('alerts:alice', (events) => published.push(...events));
  });
  afterEach(async () => {
    await hub.stop();
    await log.close();
    await rm(dir, { recursive: true, force: true });
  });

  const append = (event: FeedEvent) => log.appendToStream(activityStream('user:bob'), [feedEvents.encode(event)]);
  const until = async (check: () => boolean, what: string) => {
    const deadline = Date.now() + 5_000;
    while (!check()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  };

  it('starts a stream with a reset, publishes what a change to a followed feed does to the page, and resumes from its ring', async () => {
    page = [at(1)];
    const [reset] = await hub.watch('timeline:alice', 'gateway-1', undefined);
    expect(reset).toMatchObject({ type: 'reset', data: { items: [at(1)], newest: expect.any(String) } });
    page = [at(2), at(1)];
    await append({ type: 'ActivityAdded', data: { activity: at(2) } });
    await until(() => published.length === 1, 'the added event');
    expect(published[0]).toMatchObject({ type: 'added', data: { activity: at(2) } });
    // A delivery without a log event of a followed feed (a job, an addressed post) reads again too.
    page = [at(1)];
    hub.delivered(['timeline:alice'], await log.headPosition());
    await until(() => published.length === 2, 'the removed event');
    expect(published[1]).toEqual({ id: expect.any(String), type: 'removed', data: { id: 'a2' } });
    expect(await hub.watch('timeline:alice', 'gateway-1', reset!.id)).toEqual(published);
    expect(await hub.watch('timeline:alice', 'gateway-1', published[1]!.id)).toEqual([]);
    expect((await hub.watch('timeline:alice', 'gateway-1', 'elsewhere-3'))[0]).toMatchObject({ type: 'reset', data: { items: [at(1)] } });
  });

  it('forgets its rings on an erasure: the page is read again, and a resume gets a reset, never an event that held the erased content', async () => {
    page = [at(1)];
    await hub.watch('timeline:alice', 'gateway-1', undefined);
    page = [at(2), at(1)];
    await append({ type: 'ActivityAdded', data: { activity: at(2) } });
    await until(() => published.length === 1, 'the added event');
    const added = published[0]!;
    expect(added).toMatchObject({ type: 'added', data: { activity: at(2) } });
    page = [];
    await log.appendToStream(activityStream('user:bob'), [feedEvents.encode({ type: 'FeedErased', data: { feed: 'user:bob', time: 't' } })]);
    await until(() => published.some((event) => event.type === 'removed'), 'the erased entries removed');
    const resumed = await hub.watch('timeline:alice', 'gateway-1', added.id);
    expect(resumed).toHaveLength(1);
    expect(resumed[0]).toMatchObject({ type: 'reset', data: { items: [] } });
    expect(JSON.stringify(resumed)).not.toContain('"o2"');
  });

  it('keeps a feed while a gateway holds it (tier 1), for the grace period after (tier 2), then lets go', async () => {
    await hub.watch('timeline:alice', 'gateway-1', undefined);
    await hub.watch('timeline:alice', 'gateway-2', undefined);
    hub.unwatch('timeline:alice', 'gateway-1');
    expect(hub.counters()).toMatchObject({ streamFeedsOpen: 1, streamFeedsInGrace: 0 });
    hub.unwatch('timeline:alice', 'gateway-2');
    expect(hub.counters()).toMatchObject({ streamFeedsOpen: 0, streamFeedsInGrace: 1 });
    // In its grace period it is still read again on changes.
    const before = reads;
    page = [at(3)];
    await append({ type: 'ActivityAdded', data: { activity: at(3) } });
    await until(() => published.length === 1, 'the change in the grace period');
    expect(reads).toBe(before + 1);
    await until(() => hub.counters().streamFeedsInGrace === 0, 'the grace period to end');
    // Let go: a later change reads nothing.
    await append({ type: 'ActivityAdded', data: { activity: at(4) } });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(reads).toBe(before + 1);
  });

  it('ends a watch whose lease is not renewed, and announces a feed renewed here anew with a reset from a new ring', async () => {
    await hub.watch('timeline:alice', 'gateway-1', undefined);
    await until(() => hub.counters().streamFeedsOpen === 0, 'the lease to end');
    await until(() => hub.counters().streamFeedsInGrace === 0, 'the grace period to end');
    page = [at(5)];
    expect(await hub.renew(['timeline:alice' as FeedId], 'gateway-1')).toBe(1);
    await until(() => published.length === 1, 'the announcing reset');
    expect(published[0]).toMatchObject({ id: expect.stringMatching(/^[0-9a-f]+-0$/), type: 'reset', data: { items: [at(5)] } });
    expect(hub.counters()).toMatchObject({ streamFeedsOpen: 1 });
  });

  it('streams an aggregated feed as groups: a reset with them and the counts, then a group event for each group that is new, changed or taken out', async () => {
    const unplaced = ({ key: _key, ...group }: PlacedGroupItem) => group;
    groups = { groups: [likes('post:1', 1, 1)], unseen: 1, unread: 1 };
    const [reset] = await hub.watch('alerts:alice', 'gateway-1', undefined);
    expect(reset).toEqual({ id: expect.any(String), type: 'reset', data: { groups: [unplaced(likes('post:1', 1, 1))], unseen: 1, unread: 1 } });
    // A new group on top, then the older one gains a like and moves above it.
    groups = { groups: [likes('post:2', 1, 2), likes('post:1', 1, 1)], unseen: 2, unread: 2 };
    await append({ type: 'ActivityAdded', data: { activity: at(2) } });
    await until(() => published.length === 1, 'the new group');
    expect(published[0]).toEqual({ id: expect.any(String), type: 'group', data: { group: unplaced(likes('post:2', 1, 2)), rank: 0, unseen: 2, unread: 2 } });
    groups = { groups: [likes('post:1', 2, 3), likes('post:2', 1, 2)], unseen: 2, unread: 2 };
    await append({ type: 'ActivityAdded', data: { activity: at(3) } });
    await until(() => published.length === 2, 'the grown group');
    expect(published[1]).toMatchObject({ type: 'group', data: { group: { id: 'like-post:1', activityCount: 2 }, rank: 0 } });
    // A marking of the reader's own feed reads its groups again: seen is a change.
    groups = { groups: [likes('post:1', 2, 3, true), likes('post:2', 1, 2, true)], unseen: 0, unread: 2 };
    await log.appendToStream(activityStream('alerts:alice'), [feedEvents.encode({ type: 'NotificationsMarked', data: { feed: 'alerts:alice', mark: 'seen', time: at(4).time, allAt: 3 } })]);
    await until(() => published.length === 4, 'the marked groups');
    expect(published.slice(2).map((event) => event.type === 'group' && 'group' in event.data && [event.data.group.id, event.data.group.seen, event.data.unseen])).toEqual([
      ['like-post:1', true, 0],
      ['like-post:2', true, 0],
    ]);
    // A group that lost every activity is taken out.
    groups = { groups: [likes('post:1', 2, 3, true)], unseen: 0, unread: 1 };
    hub.delivered(['alerts:alice'], await log.headPosition());
    await until(() => published.length === 5, 'the removed group');
    expect(published[4]).toEqual({ id: expect.any(String), type: 'group', data: { removed: 'like-post:2', unseen: 0, unread: 1 } });
    // Resumed from its ring as flat feeds are; from an id it does not keep, a reset of the groups.
    expect(await hub.watch('alerts:alice', 'gateway-1', published[2]!.id)).toEqual(published.slice(3));
    expect((await hub.watch('alerts:alice', 'gateway-1', 'elsewhere-3'))[0]).toMatchObject({ type: 'reset', data: { groups: [{ id: 'like-post:1', seen: true }], unread: 1 } });
  });
});
