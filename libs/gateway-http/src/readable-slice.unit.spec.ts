import { sortKeyOf, type Activity, type FeedId, type SortKey } from '@feedmill/contracts';
import { MAX_SLICE_ROUNDS, readReadableSlice, type SlicePageReader } from './readable-slice.js';

const at = (ms: number) => new Date(Date.UTC(2026, 0, 1) + ms).toISOString();
const activity = (id: string, time: string, feed: FeedId): Activity => ({ id, time, feed, actor: 'a', verb: 'post', object: 'x', to: [], refs: ['applicant:1'] }) as unknown as Activity;

/** A slice as content answers it: newest first by key, `next` the key of the page's last activity when more follow. */
function sliceOf(activities: Activity[]): SlicePageReader {
  const sorted = [...activities].sort((a, b) => (sortKeyOf(b) < sortKeyOf(a) ? -1 : 1));
  return async (before, limit) => {
    const below = sorted.filter((a) => before === undefined || sortKeyOf(a) < before);
    const items = below.slice(0, limit);
    return { items, next: below.length > limit ? sortKeyOf(items[items.length - 1]!) : null };
  };
}

const readableOnly = (feed: FeedId) => async (feeds: readonly FeedId[]) => new Set(feeds.filter((f) => f === feed));

/** Every page from the top, following cursors, with the cursors handed out. */
async function allPages(read: SlicePageReader, limit: number) {
  const seen: string[] = [];
  const cursors: SortKey[] = [];
  let before: SortKey | undefined;
  for (let pages = 0; pages < 100; pages++) {
    const page = await readReadableSlice(read, readableOnly('user:open' as FeedId), before, limit);
    seen.push(...page.items.map((a) => a.id));
    if (page.next === null) return { seen, cursors };
    cursors.push(page.next);
    before = page.next;
  }
  throw new Error('paging did not end');
}

describe('readReadableSlice', () => {
  const limit = 2;
  // More private activities than the rounds of one request scan, several sharing each time,
  // with readable ones among them at the same times.
  const privateOnes = Array.from({ length: (MAX_SLICE_ROUNDS + 2) * (limit + 1) * 2 }, (_, i) => activity(`p${String(i).padStart(3, '0')}`, at(100 - Math.floor(i / 4)), 'user:closed' as FeedId));
  const readable = [activity('r-top', at(101), 'user:open' as FeedId), activity('r-tie', privateOnes[40]!.time, 'user:open' as FeedId), activity('r-low', at(0), 'user:open' as FeedId)];
  const read = sliceOf([...privateOnes, ...readable]);

  it('never hands out a cursor that names an activity the caller may not read', async () => {
    const { cursors } = await allPages(read, limit);
    expect(cursors.length).toBeGreaterThan(1);
    const privateIds = new Set(privateOnes.map((a) => a.id));
    for (const cursor of cursors) expect(privateIds.has(cursor.slice(cursor.indexOf('|') + 1))).toBe(false);
  });

  it('pages through every readable activity once, in order, with ties on time', async () => {
    expect((await allPages(read, limit)).seen).toEqual(['r-top', 'r-tie', 'r-low']);
    expect((await allPages(read, 1)).seen).toEqual(['r-top', 'r-tie', 'r-low']);
  });

  it('stops a scan of unreadable activities at a time boundary, after the rest of that millisecond', async () => {
    const page = await readReadableSlice(read, readableOnly('user:open' as FeedId), undefined, limit);
    expect(page.items.map((a) => a.id)).toEqual(['r-top']);
    expect(page.next).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z\|$/);
  });
});
