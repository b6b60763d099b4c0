import { activitiesImportStream, activityStream, justAbove, relevanceKeyOf, sortKeyOf, type FeedId, type FeedLogEvent } from '@feedmill/contracts';
import type { ContentStore } from '../ports.js';
import { activityAt, decidedOf, recordEvents } from './recorded.js';

const activity = activityAt;

const events = recordEvents([
  [activityStream('user:a'), { type: 'ActivityAdded', data: { activity: activity('a1', 'user:a', 1) } }],
  [activityStream('user:b'), { type: 'ActivityAdded', data: { activity: activity('b1', 'user:b', 2) } }],
  [activityStream('user:a'), { type: 'ActivityAdded', data: { activity: activity('a2', 'user:a', 3, { foreignId: 'f' }) } }],
  [activityStream('user:b'), { type: 'ActivityAdded', data: { activity: activity('b2', 'user:b', 0) } }],
  [activityStream('user:a'), { type: 'ActivityRemoved', data: { id: 'a1', feed: 'user:a', time: 't' } }],
  [activityStream('user:c'), { type: 'ActivityAdded', data: { activity: activity('c1', 'user:c', 4) } }],
]);

/** The behaviour every content store must have. `create` gives an empty store. */
export function describeContentStoreContract(name: string, create: () => Promise<ContentStore>): void {
  describe(`ContentStore contract: ${name}`, () => {
    let store: ContentStore;
    beforeEach(async () => {
      store = await create();
    });

    const snapshot = async () => ({
      recent: (await store.recent(['user:a', 'user:b', 'user:c'], undefined, 10)).map((a) => a.id),
      foreign: (await store.byForeignId('user:a', 'f'))?.id,
      got: (await store.get(['a1', 'a2', 'c1', 'zz'])).map((a) => a.id),
      position: await store.position(),
      revisions: [await store.streamRevision(activityStream('user:a')), await store.streamRevision(activityStream('user:z'))],
    });

    it('applies adds and removes, and changes nothing when the same events come again', async () => {
      await store.apply(events);
      const once = await snapshot();
      expect(once).toEqual({ recent: ['c1', 'a2', 'b1', 'b2'], foreign: 'a2', got: ['a2', 'c1'], position: 6, revisions: [2, -1] });
      await store.apply(events);
      for (const event of events) await store.applyOwn(event, decidedOf(event));
      expect(await snapshot()).toEqual(once);
    });

    it('applies its own event at once without moving its position, and never one that skips a revision', async () => {
      await store.applyOwn(events[2]!, decidedOf(events[2]!));
      expect(await store.get(['a2'])).toEqual([]);
      await store.applyOwn(events[0]!, decidedOf(events[0]!));
      expect((await store.get(['a1'])).map((a) => a.id)).toEqual(['a1']);
      expect(await store.position()).toBe(0);
    });

    it('pages newest first across feeds, strictly below a key', async () => {
      await store.apply(events);
      const [newest] = await store.recent(['user:a', 'user:b'], undefined, 1);
      expect(newest?.id).toBe('a2');
      const rest = await store.recent(['user:a', 'user:b'], `${newest!.time}|${newest!.id}`, 10);
      expect(rest.map((a) => a.id)).toEqual(['b1', 'b2']);
      expect(await store.recent(['user:nobody'], undefined, 10)).toEqual([]);
    });

    it('answers what a feed held at a log position', async () => {
      await store.apply(events);
      // At position 3, user:a held a1 and a2 (a1 was removed only at 5; removals are not undone).
      expect((await store.recent(['user:a', 'user:b'], undefined, 10, 3)).map((a) => a.id)).toEqual(['a2', 'b1']);
    });

    it('raises a bumped activity in relevance order only, once', async () => {
      await store.apply(events);
      const bump = recordEvents([[activityStream('user:b'), { type: 'ActivityBumped', data: { id: 'b2', feed: 'user:b', time: '2026-01-01T00:00:09.000Z' } }]], 7).map((e) => ({ ...e, revision: 2 }));
      await store.apply(bump);
      await store.apply(bump);
      expect((await store.recent(['user:a', 'user:b'], undefined, 10, undefined, 'relevance')).map((a) => a.id)).toEqual(['b2', 'a2', 'b1']);
      expect((await store.recent(['user:a', 'user:b'], undefined, 10)).map((a) => a.id)).toEqual(['a2', 'b1', 'b2']);
      expect((await store.get(['b2']))[0]?.bumpedAt).toBe('2026-01-01T00:00:09.000Z');
      const [top] = await store.recent(['user:b'], undefined, 1, undefined, 'relevance');
      expect((await store.recent(['user:b'], relevanceKeyOf(top!), 10, undefined, 'relevance')).map((a) => a.id)).toEqual(['b1']);
    });

    it('replaces an updated activity in place, keeping its place in both orders and what it was added at, once', async () => {
      await store.apply(events);
      const [bumped, updated, again] = recordEvents(
        [
          [activityStream('user:b'), { type: 'ActivityBumped', data: { id: 'b2', feed: 'user:b', time: '2026-01-01T00:00:09.000Z' } }],
          [activityStream('user:b'), { type: 'ActivityUpdated', data: { id: 'b2', feed: 'user:b', time: '2026-01-01T00:00:10.000Z', object: 'edited', extra: { n: 1 } } }],
          [activityStream('user:a'), { type: 'ActivityUpdated', data: { id: 'a2', feed: 'user:a', time: '2026-01-01T00:00:11.000Z', object: 'also edited' } }],
        ],
        7,
      ).map((e) => (e.stream === activityStream('user:b') ? { ...e, revision: e.revision + 2 } : { ...e, revision: e.revision + 3 }));
      await store.apply([bumped!]);
      await store.applyOwn(updated!, decidedOf(updated!));
      await store.apply([updated!, again!]);
      await store.apply([updated!, again!]);
      const [b2] = await store.get(['b2']);
      expect(b2).toEqual({ ...activity('b2', 'user:b', 0), object: 'edited', extra: { n: 1 }, bumpedAt: '2026-01-01T00:00:09.000Z', updatedAt: '2026-01-01T00:00:10.000Z' });
      expect((await store.byForeignId('user:a', 'f'))?.object).toBe('also edited');
      expect((await store.recent(['user:a', 'user:b'], undefined, 10)).map((a) => [a.id, a.object])).toEqual([['a2', 'also edited'], ['b1', 'o'], ['b2', 'edited']]);
      expect((await store.recent(['user:a', 'user:b'], undefined, 10, undefined, 'relevance')).map((a) => a.id)).toEqual(['b2', 'a2', 'b1']);
      // What a feed held at a log position still holds it, as it is now.
      expect((await store.recent(['user:b'], undefined, 10, 4)).map((a) => [a.id, a.object])).toEqual([['b1', 'o'], ['b2', 'edited']]);
      expect(await store.position()).toBe(9);
    });

        it('applies a batch of adds as its items, at the batch’s position, once', async () => {
      await store.apply(events);
      const [batch] = recordEvents(
        [[activitiesImportStream('b1'), { type: 'ActivitiesAdded', data: { id: 'b1', activities: [activity('i1', 'user:a', 5, { foreignId: 'g' }), activity('i2', 'user:c', 6)] } }]],
        7,
      );
      await store.applyOwn(batch!, decidedOf(batch!));
      expect((await store.get(['i1', 'i2'])).map((a) => a.id).sort()).toEqual(['i1', 'i2']);
      expect((await store.byForeignId('user:a', 'g'))?.id).toBe('i1');
      await store.apply([batch!]);
      await store.apply([batch!]);
      expect((await store.recent(['user:a', 'user:c'], undefined, 10)).map((a) => a.id)).toEqual(['i2', 'i1', 'c1', 'a2']);
      expect((await store.recent(['user:a', 'user:c'], undefined, 10, 6)).map((a) => a.id)).toEqual(['c1', 'a2']);
      expect(await store.streamRevision(activitiesImportStream('b1'))).toBe(0);
      expect(await store.position()).toBe(7);
    });

    it('answers the activities addressed to a feed with its own, each once, in both orders, until removed', async () => {
      await store.apply(events);
      const addressed = recordEvents(
        [
          [activityStream('user:a'), { type: 'ActivityAdded', data: { activity: activity('t1', 'user:a', 5, { to: ['notification:r', 'timeline:r'] }) } }],
          [activityStream('user:c'), { type: 'ActivityAdded', data: { activity: activity('t2', 'user:c', 6, { to: ['notification:r'] }) } }],
          [activityStream('user:c'), { type: 'ActivityBumped', data: { id: 't2', feed: 'user:c', time: '2026-01-01T00:00:01.000Z' } }],
          [activityStream('user:a'), { type: 'ActivityBumped', data: { id: 't1', feed: 'user:a', time: '2026-01-01T00:00:09.000Z' } }],
        ],
        7,
      ).map((e) => ({ ...e, revision: e.stream === activityStream('user:a') ? e.revision + 3 : e.revision + 1 }));
      await store.apply(addressed);
      const ids = async (feeds: Parameters<ContentStore['recent']>[0], order?: 'time' | 'relevance') => (await store.recent(feeds, undefined, 10, undefined, order)).map((a) => a.id);
      expect(await ids(['notification:r'])).toEqual(['t2', 't1']);
      // Posted to a feed read and addressed to another read: once.
      expect(await ids(['timeline:r', 'user:a', 'notification:r'])).toEqual(['t2', 't1', 'a2']);
      expect(await ids(['notification:r', 'user:c'], 'relevance')).toEqual(['t1', 't2', 'c1']);
      expect((await store.recent(['notification:r'], undefined, 10, 7)).map((a) => a.id)).toEqual(['t1']);
      expect((await store.get(['t1']))[0]?.to).toEqual(['notification:r', 'timeline:r']);
      await store.apply(recordEvents([[activityStream('user:a'), { type: 'ActivityRemoved', data: { id: 't1', feed: 'user:a', time: 't', to: ['notification:r', 'timeline:r'] } }]], 11).map((e) => ({ ...e, revision: 5 })));
      expect(await ids(['notification:r', 'timeline:r'])).toEqual(['t2']);
      expect(await ids(['notification:r'], 'relevance')).toEqual(['t2']);
    });

    it('reads each bounded feed within its bound, by time key and log position, in both orders, and leaves other feeds whole', async () => {
      await store.apply(events);
      // b2 (time 0) was added at position 4, after a follow at 3 and before one at 4.
      await store.apply(recordEvents([[activityStream('user:b'), { type: 'ActivityBumped', data: { id: 'b2', feed: 'user:b', time: '2026-01-01T00:00:09.000Z' } }]], 7).map((e) => ({ ...e, revision: 2 })));
      const since = sortKeyOf(activity('b1', 'user:b', 2));
      const read = async (bFollowedAt: number, order: 'time' | 'relevance' = 'time', before?: string) =>
        (
          await store.recent(['user:a', 'user:b', 'user:c'], before, 10, undefined, order, [
            { feed: 'user:b', since, followedAt: bFollowedAt },
            // a2 was added at 3, after this kept history ended.
            { feed: 'user:a', unfollowedAt: 2 },
            { feed: 'user:c', since: justAbove(sortKeyOf(activity('c1', 'user:c', 4))), followedAt: 6 },
          ])
        ).map((a) => a.id);
      // Where each was added: what places it within a bound (a1 was removed).
      expect(await store.positionsOf(['b2', 'a1', 'c1', 'zz'])).toEqual([4, null, 6, null]);
      expect(await store.positionsOf([])).toEqual([]);
      expect(await read(3)).toEqual(['b1', 'b2']);
      expect(await read(4)).toEqual(['b1']);
      expect(await read(3, 'relevance')).toEqual(['b2', 'b1']);
      // Bumped above everything, b2 stays out: a bound is by time key and position.
      expect(await read(4, 'relevance')).toEqual(['b1']);
      expect(await read(3, 'time', since)).toEqual(['b2']);
      expect((await store.recent(['user:a', 'user:b', 'user:c'], undefined, 10, undefined, 'time', [{ feed: 'user:b', since, followedAt: 4 }])).map((a) => a.id)).toEqual(['c1', 'a2', 'b1']);
      expect((await store.recent(['user:a'], undefined, 10, undefined, 'time', [{ feed: 'user:a', since: '2026-01-01T00:00:03.000Z|a2', unfollowedAt: 3 }])).map((a) => a.id)).toEqual(['a2']);
    });

    it('answers a slice by any of its refs, whatever the feed, newest first with a cursor; an update keeps the refs, a removal leaves every slice', async () => {
      await store.apply(events);
      const sliced = recordEvents(
        [
          [activityStream('user:a'), { type: 'ActivityAdded', data: { activity: activity('s1', 'user:a', 5, { refs: ['applicant:17', 'position:3'] }) } }],
          [activityStream('user:c'), { type: 'ActivityAdded', data: { activity: activity('s2', 'user:c', 6, { refs: ['applicant:17'] }) } }],
          [activityStream('user:b'), { type: 'ActivityAdded', data: { activity: activity('s3', 'user:b', 7, { refs: ['position:3'] }) } }],
          [activityStream('user:a'), { type: 'ActivityUpdated', data: { id: 's1', feed: 'user:a', time: '2026-01-01T00:00:10.000Z', object: 'edited' } }],
        ],
        7,
      ).map((e) => ({ ...e, revision: e.stream === activityStream('user:a') ? e.revision + 3 : e.stream === activityStream('user:b') ? e.revision + 2 : e.revision + 1 }));
      await store.apply(sliced);
      await store.apply(sliced);
      const ids = async (ref: string, before?: string, limit = 10) => (await store.slice(ref, before, limit)).map((a) => a.id);
      expect(await ids('applicant:17')).toEqual(['s2', 's1']);
      expect(await ids('position:3')).toEqual(['s3', 's1']);
      expect(await ids('applicant:18')).toEqual([]);
      const [newest] = await store.slice('applicant:17', undefined, 1);
      expect(newest?.id).toBe('s2');
      expect(await ids('applicant:17', sortKeyOf(newest!), 1)).toEqual(['s1']);
      expect(await ids('applicant:17', sortKeyOf({ id: 's1', time: activity('s1', 'user:a', 5).time }))).toEqual([]);
      const [s1] = await store.slice('position:3', sortKeyOf(activity('s3', 'user:b', 7)), 10);
      expect(s1).toEqual({ ...activity('s1', 'user:a', 5, { refs: ['applicant:17', 'position:3'] }), object: 'edited', updatedAt: '2026-01-01T00:00:10.000Z' });
      await store.apply(recordEvents([[activityStream('user:a'), { type: 'ActivityRemoved', data: { id: 's1', feed: 'user:a', time: 't' } }]], 11).map((e) => ({ ...e, revision: 5 })));
      expect(await ids('applicant:17')).toEqual(['s2']);
      expect(await ids('position:3')).toEqual(['s3']);
    });

    it('forgets an erased feed everywhere (feed, ids, foreign ids, targets, slices), and a rebuild from tombstones equals the live state', async () => {
      const marked = { foreignId: 'fx', to: ['timeline:r' as const], refs: ['topic:x'] };
      const history: Array<[string, FeedLogEvent]> = [
        [activityStream('user:x'), { type: 'ActivityAdded', data: { activity: activity('x1', 'user:x', 1, marked) } }],
        [activitiesImportStream('bx'), { type: 'ActivitiesAdded', data: { id: 'bx', activities: [activity('x2', 'user:x', 2), activity('k1', 'user:k', 3, { refs: ['topic:x'] })] } }],
        [activityStream('user:x'), { type: 'ActivityUpdated', data: { id: 'x1', feed: 'user:x', time: 't', object: 'changed' } }],
      ];
      const erasure: [string, FeedLogEvent] = [activityStream('user:x'), { type: 'FeedErased', data: { feed: 'user:x', time: 't', keys: ['k'] } }];
      const after: [string, FeedLogEvent] = [activityStream('user:x'), { type: 'ActivityAdded', data: { activity: activity('x3', 'user:x', 5) } }];
      const state = async () => ({
        feed: (await store.recent(['user:x', 'user:k', 'timeline:r'], undefined, 10)).map((a) => a.id),
        got: (await store.get(['x1', 'x2', 'k1', 'x3'])).map((a) => a.id),
        foreign: (await store.byForeignId('user:x', 'fx'))?.id,
        slice: (await store.slice('topic:x', undefined, 10)).map((a) => a.id),
        revision: await store.streamRevision(activityStream('user:x')),
      });
      await store.apply(recordEvents([...history, erasure, after]));
      const live = await state();
      expect(live).toEqual({ feed: ['x3', 'k1'], got: ['k1', 'x3'], foreign: undefined, slice: ['k1'], revision: 3 });
      // What a read of the log gives once the keys are destroyed: tombstones where the erased content stood.
      const rebuilt = await create();
      store = rebuilt;
      const tombstones: Array<[string, FeedLogEvent]> = [
        [activityStream('user:x'), { type: 'ContentErased', data: { of: 'ActivityAdded', feed: 'user:x', ids: ['x1'] } }],
        [activitiesImportStream('bx'), { type: 'ActivitiesAdded', data: { id: 'bx', activities: [activity('k1', 'user:k', 3, { refs: ['topic:x'] })] } }],
        [activityStream('user:x'), { type: 'ContentErased', data: { of: 'ActivityUpdated', feed: 'user:x', ids: ['x1'] } }],
      ];
      await store.apply(recordEvents([...tombstones, erasure, after]));
      expect(await state()).toEqual(live);
    });

    it('takes an erased timeline feed out of what was addressed to it before, each activity keeping its other targets', async () => {
      await store.apply(
        recordEvents([
          [activityStream('user:a'), { type: 'ActivityAdded', data: { activity: activity('t1', 'user:a', 1, { to: ['timeline:carol', 'timeline:dan'] }) } }],
          [activityStream('user:a'), { type: 'ActivityAdded', data: { activity: activity('t2', 'user:a', 2, { to: ['timeline:carol'] }) } }],
          [activityStream('timeline:carol'), { type: 'FeedErased', data: { feed: 'timeline:carol', time: 't', keys: [] } }],
          // The id used again: what is addressed to its new owner is theirs.
          [activityStream('user:a'), { type: 'ActivityAdded', data: { activity: activity('t3', 'user:a', 4, { to: ['timeline:carol'] }) } }],
        ]),
      );
      const addressedTo = async (feed: FeedId) => (await store.recent([feed], undefined, 10)).map((a) => a.id);
      expect(await addressedTo('timeline:carol' as FeedId)).toEqual(['t3']);
      expect(await addressedTo('timeline:dan' as FeedId)).toEqual(['t1']);
      expect(await addressedTo('user:a' as FeedId)).toEqual(['t3', 't2', 't1']);
      const [t1, t2] = await store.get(['t1', 't2']);
      expect([t1, t2]).toEqual([activity('t1', 'user:a', 1, { to: ['timeline:dan'] }), activity('t2', 'user:a', 2)]);
      // A later change to such an activity keeps it out of the erased feed.
      await store.apply(recordEvents([[activityStream('user:a'), { type: 'ActivityBumped', data: { id: 't2', feed: 'user:a', time: '2026-01-01T00:00:09.000Z' } }]], 5).map((e) => ({ ...e, revision: 3 })));
      expect(await addressedTo('timeline:carol' as FeedId)).toEqual(['t3']);
    });

    it('applies an erasure recorded in a stream of its own, as logs written before erasures moved into the feed\'s stream hold it', async () => {
      await store.apply(
        recordEvents([
          [activityStream('user:x'), { type: 'ActivityAdded', data: { activity: activity('x1', 'user:x', 1) } }],
          ['erased-user:x', { type: 'FeedErased', data: { feed: 'user:x', time: 't', keys: ['k'] } }],
          [activityStream('user:x'), { type: 'ActivityAdded', data: { activity: activity('x2', 'user:x', 2) } }],
        ]),
      );
      expect((await store.get(['x1', 'x2'])).map((a) => a.id)).toEqual(['x2']);
      expect(await store.streamRevision(activityStream('user:x'))).toBe(1);
    });

    it('keeps an import its writer appended after an erasure and applied before reading the erasure', async () => {
      const [before, erasure, imported] = recordEvents([
        [activityStream('user:x'), { type: 'ActivityAdded', data: { activity: activity('x1', 'user:x', 1) } }],
        [activityStream('user:x'), { type: 'FeedErased', data: { feed: 'user:x', time: 't', keys: ['k'] } }],
        [activitiesImportStream('bx'), { type: 'ActivitiesAdded', data: { id: 'bx', activities: [activity('x2', 'user:x', 2), activity('k1', 'user:k', 3)] } }],
      ]);
      await store.apply([before!]);
      await store.applyOwn(imported!, decidedOf(imported!));
      await store.apply([erasure!, imported!]);
      expect((await store.get(['x1', 'x2', 'k1'])).map((a) => a.id).sort()).toEqual(['k1', 'x2']);
      expect((await store.recent(['user:x'], undefined, 10)).map((a) => a.id)).toEqual(['x2']);
    });

    it('lets a query wait for a position it has not applied yet', async () => {
      const waiting = store.reach(3);
      await store.apply(events.slice(0, 3));
      await expect(waiting).resolves.toBeUndefined();
    });
  });
}
