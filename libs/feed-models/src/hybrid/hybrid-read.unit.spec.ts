import { justAbove, sortKeyOf, type Activity, type FeedId, type SortKey } from '@feedmill/contracts';
import { activityAt as at, seededRandom } from '../testing.js';
import type { PullScope, StoredTimeline } from '../timeline-read.js';
import { readHybridPage } from './hybrid-read.js';
import { PULLED_WHOLE, type PulledEdges } from './push-or-pull.js';

const newestFirst = (a: Activity, b: Activity) => (sortKeyOf(a) < sortKeyOf(b) ? 1 : -1);

/** What a stored timeline holds of each edge as a hybrid store keeps it: pushed above the floor, switched above their bound. */
function storedFor(all: readonly Activity[], edges: PulledEdges, pullBelow: SortKey | null): StoredTimeline {
  const held = all.filter((a) => {
    const from = edges.get(a.feed);
    if (from === PULLED_WHOLE) return false;
    const key = sortKeyOf(a);
    return (pullBelow === null || key >= pullBelow) && (from === undefined || key >= from);
  });
  return {
    pullBelow,
    newestBelow: (before, limit) => held.filter((a) => before === undefined || sortKeyOf(a) < before).slice(0, limit),
  };
}

function pullFrom(all: readonly Activity[], calls: Array<{ before: SortKey | undefined; scope: PullScope | undefined }>) {
  return async (before: SortKey | undefined, limit: number, scope?: PullScope) => {
    calls.push({ before, scope });
    const inScope = (feed: FeedId) => !scope || ('only' in scope ? scope.only.includes(feed) : !scope.except.includes(feed));
    return all.filter((a) => inScope(a.feed) && (before === undefined || sortKeyOf(a) < before)).slice(0, limit);
  };
}

describe('readHybridPage', () => {
  it.each([1, 2, 3, 4, 5, 6, 7, 8])('pages every followed activity once, newest first, whatever each edge’s side (seed %i)', async (seed) => {
    const random = seededRandom(seed);
    const feeds: FeedId[] = ['user:a', 'user:b', 'user:c', 'user:d', 'user:e'];
    const all = Array.from({ length: 40 }, (_, i) => at(`p${i}`, feeds[Math.floor(random() * feeds.length)]!, Math.floor(random() * 300))).sort(newestFirst);
    const keyAt = () => sortKeyOf(all[Math.floor(random() * all.length)]!);
    const edges: PulledEdges = new Map();
    for (const feed of feeds) {
      const side = random();
      if (side < 0.3) edges.set(feed, PULLED_WHOLE);
      else if (side < 0.6) edges.set(feed, random() < 0.5 ? keyAt() : justAbove(keyAt()));
    }
    const pullBelow = random() < 0.5 ? null : justAbove(keyAt());
    const stored = storedFor(all, edges, pullBelow);
    const seen: string[] = [];
    let before: SortKey | undefined;
    for (let pages = 0; pages < 100; pages++) {
      const page = await readHybridPage(stored, edges, before, 1 + Math.floor(random() * 6), pullFrom(all, []));
      seen.push(...page.items.map((a) => a.id));
      if (page.next === null) break;
      before = page.next;
    }
    expect(seen).toEqual(all.map((a) => a.id));
  });

  it('reads pulled feeds by name, and nothing below a page that what is stored and pulled fill', async () => {
    const posts = [at('b9', 'user:b', 9), at('a8', 'user:a', 8), at('c7', 'user:c', 7), at('a6', 'user:a', 6), at('c2', 'user:c', 2), at('d1', 'user:d', 1)];
    // a pushed, b pulled whole, c pushed since second 5, d pushed; the floor at second 3.
    const edges: PulledEdges = new Map<FeedId, SortKey | null>([
      ['user:b', PULLED_WHOLE],
      ['user:c', justAbove(sortKeyOf(at('x', 'user:c', 5)))],
    ]);
    const floor = justAbove(sortKeyOf(at('d1', 'user:d', 3)));
    const stored = storedFor(posts, edges, floor);
    const calls: Array<{ before: SortKey | undefined; scope: PullScope | undefined }> = [];
    const first = await readHybridPage(stored, edges, undefined, 2, pullFrom(posts, calls));
    expect(first.items.map((a) => a.id)).toEqual(['b9', 'a8']);
    expect(calls).toEqual([{ before: undefined, scope: { only: ['user:b'] } }]);

    calls.length = 0;
    const rest = await readHybridPage(stored, edges, first.next!, 10, pullFrom(posts, calls));
    expect(rest.items.map((a) => a.id)).toEqual(['c7', 'a6', 'c2', 'd1']);
    expect(rest.next).toBeNull();
    // c below its own bound, then every other pushed feed below the floor.
    expect(calls.map((call) => call.scope)).toEqual([{ only: ['user:b'] }, { only: ['user:c'] }, { except: ['user:b', 'user:c'] }]);
  });

  it('takes an activity posted to two feeds, one pushed and one pulled, once', async () => {
    const shared = at('s1', 'user:a', 5);
    const stored: StoredTimeline = { pullBelow: null, newestBelow: () => [shared] };
    const edges: PulledEdges = new Map([['user:b', PULLED_WHOLE]]);
    const page = await readHybridPage(stored, edges, undefined, 10, async () => [at('b6', 'user:b', 6), shared]);
    expect(page.items.map((a) => a.id)).toEqual(['b6', 's1']);
  });
});
