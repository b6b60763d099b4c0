import { sortKeyOf, type Activity, type FeedId, type TimelineDelivery } from '@feedmill/contracts';
import type { TimelineStore } from '../ports.js';

const activity = (id: string, feed: FeedId, second: number): Activity => ({
  id,
  feed,
  actor: 'a',
  verb: 'post',
  object: 'o',
  time: new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString(),
});

/**
 * The behaviour every timeline store must have. `create(cap)` gives an empty store whose
 * readers keep at most `cap` entries.
 */
export function describeTimelineStoreContract(name: string, create: (cap: number) => Promise<TimelineStore>): void {
  describe(`TimelineStore contract: ${name}`, () => {
    const reader: FeedId = 'timeline:r';
    const follow = (target: FeedId, recent: Activity[] = [], exhausted = true): TimelineDelivery => ({ kind: 'follow', reader, target, recent, exhausted });
    const insert = (a: Activity, readers: FeedId[] = [reader]): TimelineDelivery => ({ kind: 'insert', readers, activity: a });

    it('applies each batch once and refuses one that does not start where it stands', async () => {
      const store = await create(3);
      expect(await store.deliver({ after: 0, position: 4, deliveries: [follow('user:a')] })).toEqual({ applied: true, position: 4 });
      expect(await store.deliver({ after: 9, position: 10, deliveries: [insert(activity('a1', 'user:a', 1))] })).toEqual({ applied: false, position: 4 });
      expect(await store.size(reader)).toBe(0);
      await store.deliver({ after: 4, position: 5, deliveries: [insert(activity('a1', 'user:a', 1)), insert(activity('a1', 'user:a', 1))] });
      expect(await store.size(reader)).toBe(1);
      expect(await store.position()).toBe(5);
    });

    it('never holds more than the cap, and serves what fell below it from the pull path', async () => {
      const store = await create(3);
      const posted = Array.from({ length: 6 }, (_, i) => activity(`a${i}`, 'user:a', i));
      await store.deliver({ after: 0, position: 1, deliveries: [follow('user:a'), ...posted.map((a) => insert(a))] });
      expect(await store.size(reader)).toBe(3);
      const pulled: Array<string | undefined> = [];
      const pull = async (before: string | undefined, limit: number) => {
        pulled.push(before);
        return [...posted].reverse().filter((a) => before === undefined || sortKeyOf(a) < before).slice(0, limit);
      };
      const first = await store.readPage(reader, undefined, 2, pull);
      expect(first.items.map((a) => a.id)).toEqual(['a5', 'a4']);
      expect(pulled).toEqual([]);
      const second = await store.readPage(reader, first.next!, 10, pull);
      expect(second.items.map((a) => a.id)).toEqual(['a3', 'a2', 'a1', 'a0']);
      expect(second.next).toBeNull();
      expect(pulled.length).toBe(1);
    });

    it('delivers only to readers it materializes, and removes by activity and by unfollow', async () => {
      const store = await create(10);
      await store.deliver({
        after: 0,
        position: 1,
        deliveries: [
          follow('user:a'),
          follow('user:b'),
          insert(activity('a1', 'user:a', 1), [reader, 'timeline:stranger']),
          insert(activity('b1', 'user:b', 2)),
          insert(activity('b2', 'user:b', 3)),
          { kind: 'remove', readers: [reader], id: 'b1' },
        ],
      });
      expect(await store.size('timeline:stranger')).toBe(0);
      const none = async () => [];
      expect((await store.readPage(reader, undefined, 10, none)).items.map((a) => a.id)).toEqual(['b2', 'a1']);
      await store.deliver({ after: 1, position: 2, deliveries: [{ kind: 'unfollow', reader, target: 'user:b' }] });
      expect((await store.readPage(reader, undefined, 10, none)).items.map((a) => a.id)).toEqual(['a1']);
      expect(await store.counters()).toEqual({ timelines: 1, entries: 1, delivered: 3 });
    });

    it('reads everything from the pull path for a reader it never materialized', async () => {
      const store = await create(10);
      const page = await store.readPage('timeline:new', undefined, 2, async (_before, limit) =>
        [activity('x2', 'user:x', 2), activity('x1', 'user:x', 1), activity('x0', 'user:x', 0)].slice(0, limit),
      );
      expect(page.items.map((a) => a.id)).toEqual(['x2', 'x1']);
      expect(page.next).not.toBeNull();
    });
  });
}
