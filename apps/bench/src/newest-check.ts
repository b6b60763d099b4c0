import { FeedClient } from '@feedmill/harness';

/**
 * The check that both systems hold the same timelines: for a sample of readers, the newest
 * entries on each side are the same posts in the same order. Activity ids differ between
 * the systems, so posts are compared by what both were sent: author and object.
 */
export interface PostContent {
  actor: string;
  object: string;
}

/** A reader's newest posts, or why they could not be read. */
export type NewestPage = PostContent[] | { error: string };

export interface NewestCheck {
  readers: number;
  newest: number;
  /** Entries compared, counted on feedmill's side. */
  entries: number;
  matches: number;
  mismatches: number;
  /** A few mismatching readers, each in one line. */
  examples: string[];
}

/** `count` readers spread evenly over `total`, so that light and heavy readers are both in. */
export function sampleReaders(count: number, total: number): number[] {
  const n = Math.min(count, total);
  return Array.from({ length: n }, (_, i) => Math.floor((i * total) / n));
}

const shown = (page: NewestPage) => ('error' in page ? page.error : `[${page.map((p) => `${p.actor} ${p.object}`).join(', ')}]`);

function whereTheyDiffer(ours: NewestPage, theirs: NewestPage): string {
  if ('error' in ours || 'error' in theirs) return '';
  const at = ours.findIndex((p, i) => p.actor !== theirs[i]?.actor || p.object !== theirs[i]?.object);
  return at === -1 ? ` (lengths ${ours.length} and ${theirs.length})` : ` (first difference at ${at})`;
}

export function compareNewest(readers: readonly string[], newest: number, feedmill: ReadonlyMap<string, NewestPage>, redis: ReadonlyMap<string, NewestPage>, maxExamples = 3): NewestCheck {
  const check: NewestCheck = { readers: readers.length, newest, entries: 0, matches: 0, mismatches: 0, examples: [] };
  for (const reader of readers) {
    const ours = feedmill.get(reader) ?? { error: 'not read' };
    const theirs = redis.get(reader) ?? { error: 'not read' };
    if (!('error' in ours)) check.entries += ours.length;
    const same = !('error' in ours) && !('error' in theirs) && ours.length === theirs.length && ours.every((p, i) => p.actor === theirs[i]!.actor && p.object === theirs[i]!.object);
    if (same) {
      check.matches++;
      continue;
    }
    check.mismatches++;
    if (check.examples.length < maxExamples) {
      check.examples.push(`${reader}${whereTheyDiffer(ours, theirs)}: feedmill ${shown(ours)} vs Redis ${shown(theirs)}`);
    }
  }
  return check;
}

/** Readers' newest posts through feedmill's HTTP API. */
export async function feedmillNewest(baseUrl: string, readers: readonly string[], newest: number): Promise<Map<string, NewestPage>> {
  const api = new FeedClient(baseUrl);
  const pages = new Map<string, NewestPage>();
  for (const reader of readers) {
    const page = await api.page(`timeline:${reader}`, newest);
    pages.set(reader, page.status === 200 ? page.body.items.map(({ actor, object }) => ({ actor, object })) : { error: `feedmill answered ${page.status}` });
  }
  return pages;
}
