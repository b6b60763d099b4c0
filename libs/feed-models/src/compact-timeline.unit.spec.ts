import { justAbove, relevanceKeyOf, sortKeyOf, type Activity, type FeedId, type KeyOf, type SortKey, type TimelineItem } from '@feedmill/contracts';
import { ActivityTable, type ActivityHandle, type TimelineOrder } from './activity-table.js';
import { CompactTimeline } from './compact-timeline.js';
import { readTimelinePage } from './timeline-read.js';
import { seededRandom } from './testing.js';

const at = (second: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString();
const activity = (id: string, feed: FeedId, second: number): Activity => ({ id, feed, actor: 'a', verb: 'post', object: 'o', time: at(second) });
const bumped = (a: Activity, second: number): Activity => ({ ...a, bumpedAt: at(second) });

/** A compact timeline and its table, driven with activities as the store drives it: each handle held for the call. */
function timelineOf(cap: number, order: TimelineOrder = 'time', table = new ActivityTable(), links = false) {
  const timeline = new CompactTimeline(cap, table, order);
  const handleOf = (a: Activity) => (links ? table.internReference(a) : table.intern(a));
  const withHandle = <T>(a: Activity, use: (handle: ActivityHandle) => T): T => {
    const handle = handleOf(a);
    table.hold(handle);
    const result = use(handle);
    table.release(handle);
    return result;
  };
  return {
    timeline,
    table,
    insert: (a: Activity) => withHandle(a, (handle) => timeline.insert(handle)),
    replace: (a: Activity) => withHandle(a, (handle) => timeline.replace(handle)),
    mergeFeed: (recent: readonly Activity[], exhausted: boolean) => {
      const handles = recent.map(handleOf);
      for (const handle of handles) table.hold(handle);
      timeline.mergeFeed(handles, exhausted);
      for (const handle of handles) table.release(handle);
    },
    ids: (before?: SortKey) => timeline.newestBelow(before, 1000).map((a) => a.id),
  };
}

describe('CompactTimeline', () => {
  it('never holds more than its cap and raises its floor to the newest entry it dropped', () => {
    const { timeline, insert, ids } = timelineOf(3);
    for (let i = 1; i <= 5; i++) expect(insert(activity(`a${i}`, 'user:x', i))).toBe(true);
    expect(timeline.size).toBe(3);
    expect(ids()).toEqual(['a5', 'a4', 'a3']);
    expect(timeline.floor).toBe(sortKeyOf(activity('a2', 'user:x', 2)));
    expect(timeline.pullBelow).toBe(justAbove(timeline.floor!));
  });

  it('ignores an activity it already holds and one that belongs at or below its floor', () => {
    const { insert, ids } = timelineOf(2);
    insert(activity('a3', 'user:x', 3));
    insert(activity('a4', 'user:x', 4));
    insert(activity('a5', 'user:x', 5));
    expect(insert(activity('a5', 'user:x', 5))).toBe(false);
    expect(insert(activity('a1', 'user:x', 1))).toBe(false);
    expect(insert(activity('a3', 'user:x', 3))).toBe(false);
    expect(ids()).toEqual(['a5', 'a4']);
  });

  it('inserts out-of-order activities in sort order, and pages below a key', () => {
    const { insert, ids } = timelineOf(10);
    for (const s of [5, 1, 3, 2, 4]) insert(activity(`a${s}`, 'user:x', s));
    expect(ids()).toEqual(['a5', 'a4', 'a3', 'a2', 'a1']);
    expect(ids(sortKeyOf(activity('a3', 'user:x', 3)))).toEqual(['a2', 'a1']);
    expect(ids(justAbove(sortKeyOf(activity('a3', 'user:x', 3))))).toEqual(['a3', 'a2', 'a1']);
  });

  it('orders equal times by id, as the key text does', () => {
    const { insert, ids } = timelineOf(10);
    for (const id of ['b', 'ab', 'a', 'abc', 'B']) insert(activity(id, 'user:x', 7));
    insert(activity('early', 'user:x', 6));
    expect(ids()).toEqual(['b', 'abc', 'ab', 'a', 'B', 'early']);
    expect(ids(sortKeyOf(activity('ab', 'user:x', 7)))).toEqual(['a', 'B', 'early']);
  });

  it('removes one activity, or every activity of an unfollowed feed', () => {
    const { timeline, insert, ids } = timelineOf(10);
    insert(activity('a1', 'user:x', 1));
    insert(activity('b1', 'user:y', 2));
    insert(activity('a2', 'user:x', 3));
    expect(timeline.remove('b1')).toBe(true);
    expect(timeline.remove('b1')).toBe(false);
    expect(timeline.remove('never')).toBe(false);
    insert(activity('b2', 'user:y', 4));
    expect(timeline.removeFeed('user:x', 'timeline:r')).toBe(2);
    expect(ids()).toEqual(['b2']);
  });

  it("keeps, when a feed is unfollowed, its entries addressed to the reader, not another's", () => {
    const { timeline, insert, ids } = timelineOf(10);
    insert(activity('a1', 'user:x', 1));
    insert({ ...activity('a2', 'user:x', 2), to: ['timeline:r'] });
    insert({ ...activity('a3', 'user:x', 3), to: ['timeline:other'] });
    expect(timeline.removeFeed('user:x', 'timeline:r')).toBe(2);
    expect(ids()).toEqual(['a2']);
  });

  it('raises its floor when a followed feed has more history than was merged', () => {
    const { timeline, insert, mergeFeed, ids } = timelineOf(10);
    insert(activity('y1', 'user:y', 1));
    insert(activity('y5', 'user:y', 5));
    mergeFeed([activity('x6', 'user:x', 6), activity('x3', 'user:x', 3)], false);
    expect(timeline.floor).toBe(sortKeyOf(activity('x3', 'user:x', 3)));
    expect(ids()).toEqual(['x6', 'y5']);
    // An exhausted feed leaves the floor where it is.
    mergeFeed([activity('z4', 'user:z', 4), activity('z2', 'user:z', 2)], true);
    expect(ids()).toEqual(['x6', 'y5', 'z4']);
  });

  it('by time, keeps a bumped entry in its place with the new version, and ignores a bump of one it lacks', () => {
    const { timeline, insert, replace } = timelineOf(10);
    const posts = [1, 2, 3].map((s) => activity(`a${s}`, 'user:x', s));
    for (const post of posts) insert(post);
    expect(replace(bumped(posts[0]!, 50))).toBe(true);
    expect(replace(bumped(activity('a9', 'user:x', 9), 50))).toBe(false);
    expect(timeline.newestBelow(undefined, 10).map((a) => [a.id, a.bumpedAt])).toEqual([
      ['a3', undefined],
      ['a2', undefined],
      ['a1', at(50)],
    ]);
  });

  it('by relevance, moves a bumped entry up to its new key, and lets one bumped below its floor go', () => {
    const { timeline, insert, ids } = timelineOf(3, 'relevance');
    const posts = [1, 2, 3, 4].map((s) => activity(`a${s}`, 'user:x', s * 10));
    for (const post of posts) insert(post);
    expect(ids()).toEqual(['a4', 'a3', 'a2']);
    expect(insert(bumped(posts[1]!, 45))).toBe(false);
    expect(ids()).toEqual(['a2', 'a4', 'a3']);
    expect(timeline.floor).toBe(relevanceKeyOf(posts[0]!));
    // A bump raises the relevance of one the timeline dropped: it comes back above the floor.
    expect(insert(bumped(posts[0]!, 41))).toBe(true);
    expect(ids()).toEqual(['a2', 'a1', 'a4']);
    expect(timeline.floor).toBe(relevanceKeyOf(posts[2]!));
    expect(ids(relevanceKeyOf(bumped(posts[0]!, 41)))).toEqual(['a4']);
  });

  it('lets readers of one table hold different versions, and frees a version once none holds it', () => {
    const table = new ActivityTable();
    const first = timelineOf(5, 'time', table);
    const second = timelineOf(5, 'relevance', table);
    const post = activity('a1', 'user:x', 1);
    first.insert(post);
    second.insert(structuredClone(post));
    expect(table.size).toBe(1);
    expect(first.timeline.newestBelow(undefined, 1)[0]).toBe(second.timeline.newestBelow(undefined, 1)[0]);
    second.insert(bumped(post, 9));
    expect(table.size).toBe(2);
    expect(first.timeline.newestBelow(undefined, 1)[0]!.bumpedAt).toBeUndefined();
    expect(second.timeline.newestBelow(undefined, 1)[0]!.bumpedAt).toBe(at(9));
    first.replace(bumped(post, 9));
    expect(table.size).toBe(1);
    first.timeline.clear();
    second.timeline.remove('a1');
    expect(table.size).toBe(0);
  });

  it('gives a linking reader one reference object per version, shared with other linking readers', () => {
    const table = new ActivityTable();
    const linking = [timelineOf(5, 'time', table, true), timelineOf(5, 'time', table, true)];
    const embedding = timelineOf(5, 'time', table);
    const post = activity('a1', 'user:x', 1);
    for (const reader of [...linking, embedding]) reader.insert(structuredClone(post));
    const [a, b] = linking.map((reader) => reader.timeline.newestBelow(undefined, 1)[0]);
    expect(a).toBe(b);
    expect(a).toEqual({ id: 'a1', feed: 'user:x', time: post.time });
    expect(embedding.timeline.newestBelow(undefined, 1)[0]).toEqual(post);
  });

  it('grows and compacts its array without losing order across many trims', () => {
    const { timeline, insert, ids } = timelineOf(40);
    const random = seededRandom(3);
    const posted: Activity[] = [];
    for (let i = 0; i < 2000; i++) {
      const post = activity(`p${i}`, 'user:x', i + Math.floor(random() * 30));
      posted.push(post);
      insert(post);
    }
    const expected = posted.map((a) => a).sort((x, y) => (sortKeyOf(x) < sortKeyOf(y) ? 1 : -1));
    const floor = timeline.floor!;
    expect(ids()).toEqual(expected.filter((a) => sortKeyOf(a) > floor).map((a) => a.id));
    expect(timeline.size).toBe(40);
  });
});

/**
 * The reference model: the same semantics as plainly as they can be written, a sorted array
 * of items and a floor key, everything found by scanning.
 */
class SortedArrayTimeline {
  entries: TimelineItem[] = [];
  floor: SortKey | null = null;

  constructor(
    readonly cap: number,
    readonly keyOf: KeyOf,
  ) {}

  insert(item: TimelineItem): boolean {
    const held = this.entries.find((entry) => entry.id === item.id);
    if (!held) return this.place(item);
    if (held.bumpedAt !== item.bumpedAt) this.swap(held, item);
    return false;
  }

  replace(item: TimelineItem): boolean {
    const held = this.entries.find((entry) => entry.id === item.id);
    if (held && held.bumpedAt !== item.bumpedAt) this.swap(held, item);
    return held !== undefined;
  }

  remove(id: string): boolean {
    const before = this.entries.length;
    this.entries = this.entries.filter((entry) => entry.id !== id);
    return this.entries.length < before;
  }

  removeFeed(feed: FeedId): number {
    const before = this.entries.length;
    this.entries = this.entries.filter((entry) => entry.feed !== feed);
    return before - this.entries.length;
  }

  mergeFeed(recent: readonly TimelineItem[], exhausted: boolean): void {
    const oldest = recent[recent.length - 1];
    if (!exhausted && oldest && (this.floor === null || this.keyOf(oldest) > this.floor)) {
      const floor = this.keyOf(oldest);
      this.entries = this.entries.filter((entry) => this.keyOf(entry) > floor);
      this.floor = floor;
    }
    for (const item of recent) this.insert(item);
  }

  newestBelow(before: SortKey | undefined, limit: number): TimelineItem[] {
    return this.entries
      .filter((entry) => before === undefined || this.keyOf(entry) < before)
      .reverse()
      .slice(0, limit);
  }

  private swap(held: TimelineItem, item: TimelineItem): void {
    this.remove(held.id);
    this.place(item);
  }

  private place(item: TimelineItem): boolean {
    if (this.floor !== null && this.keyOf(item) <= this.floor) return false;
    this.entries.push(item);
    this.entries.sort((a, b) => (this.keyOf(a) < this.keyOf(b) ? -1 : 1));
    if (this.entries.length > this.cap) {
      const dropped = this.entries.splice(0, this.entries.length - this.cap);
      this.floor = this.keyOf(dropped[dropped.length - 1]!);
    }
    return true;
  }
}

describe('CompactTimeline against a sorted-array reference', () => {
  const cases: Array<[number, number, TimelineOrder]> = [
    [1, 1, 'time'],
    [2, 3, 'time'],
    [3, 7, 'time'],
    [4, 40, 'time'],
    [5, 1, 'relevance'],
    [6, 3, 'relevance'],
    [7, 7, 'relevance'],
    [8, 40, 'relevance'],
  ];
  it.each(cases)('does what the reference does, step by step (seed %i, cap %i, by %s)', (seed, cap, order) => {
    const random = seededRandom(seed);
    const keyOf = order === 'relevance' ? relevanceKeyOf : sortKeyOf;
    const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)]!;
    const table = new ActivityTable();
    // Three readers of one table: two of the order under test (one linking), one of the other order.
    const readers = [
      { compact: timelineOf(cap, order, table), reference: new SortedArrayTimeline(cap, keyOf), links: false },
      { compact: timelineOf(cap, order, table, true), reference: new SortedArrayTimeline(cap, keyOf), links: true },
      { compact: timelineOf(cap + 2, order === 'time' ? 'relevance' : 'time', table), reference: new SortedArrayTimeline(cap + 2, order === 'time' ? relevanceKeyOf : sortKeyOf), links: false },
    ];
    const asStored = (a: Activity, links: boolean): TimelineItem => (links ? { id: a.id, feed: a.feed, time: a.time, ...(a.bumpedAt ? { bumpedAt: a.bumpedAt } : {}) } : a);
    const feeds: FeedId[] = ['user:a', 'user:b', 'user:c'];
    // Few seconds and prefix-sharing ids, so that equal times and near-equal keys are common.
    const ids = ['a', 'ab', 'abc', 'b', 'B', 'a-1'];
    const current = new Map<string, Activity>();
    let counter = 0;
    const versionOf = (item: TimelineItem) => [item.id, item.bumpedAt ?? null];

    for (let step = 0; step < 600; step++) {
      const roll = random();
      const reader = pick(readers);
      const known = [...current.values()];
      if (roll < 0.35) {
        const post = activity(`${pick(ids)}${counter++ % 7}`, pick(feeds), Math.floor(random() * 12));
        if (current.has(post.id)) continue;
        current.set(post.id, post);
        // Deliveries come with fresh objects, as decoded messages do.
        for (const r of readers) if (random() < 0.8) expect(r.compact.insert(structuredClone(post))).toBe(r.reference.insert(asStored(post, r.links)));
      } else if (roll < 0.45 && known.length > 0) {
        // A re-delivery, sometimes of an older version than the one held.
        const post = pick(known);
        const version = random() < 0.5 ? post : { ...post, bumpedAt: undefined };
        if (version.bumpedAt === undefined) delete version.bumpedAt;
        expect(reader.compact.insert(structuredClone(version))).toBe(reader.reference.insert(asStored(version, reader.links)));
      } else if (roll < 0.6 && known.length > 0) {
        const post = bumped(pick(known), Math.floor(random() * 20));
        current.set(post.id, post);
        for (const r of readers) {
          const byRelevance = r.compact.timeline.order === 'relevance';
          if (byRelevance) expect(r.compact.insert(post)).toBe(r.reference.insert(asStored(post, r.links)));
          else expect(r.compact.replace(post)).toBe(r.reference.replace(asStored(post, r.links)));
        }
      } else if (roll < 0.7 && known.length > 0) {
        const id = pick(known).id;
        for (const r of readers) expect(r.compact.timeline.remove(id)).toBe(r.reference.remove(id));
      } else if (roll < 0.76) {
        const feed = pick(feeds);
        expect(reader.compact.timeline.removeFeed(feed, 'timeline:r')).toBe(reader.reference.removeFeed(feed));
      } else if (roll < 0.86) {
        const feed = pick(feeds);
        const recent = known
          .filter((a) => a.feed === feed)
          .sort((x, y) => (reader.reference.keyOf(x) < reader.reference.keyOf(y) ? 1 : -1))
          .slice(0, reader.reference.cap + 1);
        const exhausted = random() < 0.5;
        reader.compact.mergeFeed(recent, exhausted);
        reader.reference.mergeFeed(
          recent.map((a) => asStored(a, reader.links)),
          exhausted,
        );
      } else {
        const cursor = known.length === 0 ? undefined : reader.reference.keyOf(pick(known));
        const before = cursor !== undefined && random() < 0.3 ? justAbove(cursor) : cursor;
        const limit = 1 + Math.floor(random() * 5);
        expect(reader.compact.timeline.newestBelow(before, limit).map(versionOf)).toEqual(reader.reference.newestBelow(before, limit).map(versionOf));
      }
      for (const r of readers) {
        expect({ step, entries: r.compact.timeline.newestBelow(undefined, 1000).map(versionOf), floor: r.compact.timeline.floor }).toEqual({
          step,
          entries: r.reference.newestBelow(undefined, 1000).map(versionOf),
          floor: r.reference.floor,
        });
        expect(r.compact.timeline.size).toBeLessThanOrEqual(r.reference.cap);
      }
      // Nothing leaks: the table holds no more versions than the entries and floors of its readers.
      expect(table.size).toBeLessThanOrEqual(readers.reduce((sum, r) => sum + r.compact.timeline.size + 1, 0));
    }
    for (const r of readers) r.compact.timeline.clear();
    expect(table.size).toBe(0);
  });
});

describe('a compact timeline read through the pull path below its floor', () => {
  it.each([1, 2, 3, 4, 5])('equals the reference timeline page by page (seed %i)', async (seed) => {
    const next = seededRandom(seed);
    const feeds: FeedId[] = ['user:a', 'user:b', 'user:c', 'user:d'];
    const posted = new Map<FeedId, Activity[]>(feeds.map((f) => [f, []]));
    const followed = new Set<FeedId>();
    const { timeline, insert, mergeFeed } = timelineOf(7);
    let counter = 0;
    const newestFirst = (x: Activity, y: Activity) => (sortKeyOf(y) < sortKeyOf(x) ? -1 : 1);
    const recentOf = (feed: FeedId, limit: number) => [...posted.get(feed)!].sort(newestFirst).slice(0, limit);

    for (let step = 0; step < 300; step++) {
      const roll = next();
      const feed = feeds[Math.floor(next() * feeds.length)]!;
      if (roll < 0.6) {
        // Times jump around so that late, out-of-order activities happen too.
        const a = activity(`p${++counter}`, feed, Math.floor(next() * 1000));
        posted.get(feed)!.push(a);
        if (followed.has(feed)) insert(a);
      } else if (roll < 0.75) {
        const list = posted.get(feed)!;
        if (list.length > 0) {
          const [removed] = list.splice(Math.floor(next() * list.length), 1);
          timeline.remove(removed!.id);
        }
      } else if (roll < 0.88) {
        if (!followed.has(feed)) {
          followed.add(feed);
          const recent = recentOf(feed, timeline.cap + 1);
          mergeFeed(recent, recent.length <= timeline.cap);
        }
      } else if (followed.delete(feed)) {
        timeline.removeFeed(feed, 'timeline:r');
      }
      expect(timeline.size).toBeLessThanOrEqual(timeline.cap);
    }

    const reference = [...followed].flatMap((f) => posted.get(f)!).sort(newestFirst);
    const pull = async (before: string | undefined, limit: number) =>
      reference.filter((a) => before === undefined || sortKeyOf(a) < before).slice(0, limit);
    const seen: TimelineItem[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < 1000; pages++) {
      const page = await readTimelinePage(timeline, cursor, 3, pull);
      seen.push(...page.items);
      if (page.next === null) break;
      cursor = page.next;
    }
    expect(seen.map((a) => a.id)).toEqual(reference.map((a) => a.id));
  });
});
