import { FeedClient } from '@feedmill/harness';
import type { NewestPage, PostContent } from './newest-check.js';

/**
 * The check that two deployments, fed the same posts, hold the same timelines, where
 * concurrent clients made each receive the posts in its own interleaving: each reader's
 * whole timeline compared as a set, by author and object, so that neighbours swapped, and a
 * post the load generator sent twice (wrk's overshoot), do not count as differences.
 */
export interface TimelineSetCheck {
  readers: number;
  /** Entries compared, counted on the reference side. */
  entries: number;
  matches: number;
  mismatches: number;
  /** A few mismatching readers, each in one line. */
  examples: string[];
}

export interface NamedPages {
  name: string;
  pages: ReadonlyMap<string, NewestPage>;
}

const key = (post: PostContent) => `${post.actor} ${post.object}`;

function onlyIn(a: ReadonlySet<string>, b: ReadonlySet<string>): string[] {
  return [...a].filter((entry) => !b.has(entry));
}

function shownDifference(name: string, entries: string[]): string {
  const some = entries.slice(0, 3).join(', ');
  return `${entries.length} only in ${name}${entries.length === 0 ? '' : ` (${some}${entries.length > 3 ? ', ...' : ''})`}`;
}

/** Compares each reader's timeline on `other` with `reference`. */
export function compareTimelineSets(readers: readonly string[], reference: NamedPages, other: NamedPages, maxExamples = 3): TimelineSetCheck {
  const check: TimelineSetCheck = { readers: readers.length, entries: 0, matches: 0, mismatches: 0, examples: [] };
  const mismatch = (line: string) => {
    check.mismatches++;
    if (check.examples.length < maxExamples) check.examples.push(line);
  };
  for (const reader of readers) {
    const theirs = reference.pages.get(reader) ?? { error: 'not read' };
    const ours = other.pages.get(reader) ?? { error: 'not read' };
    if ('error' in theirs || 'error' in ours) {
      mismatch(`${reader}: ${reference.name} ${'error' in theirs ? theirs.error : 'read'}, ${other.name} ${'error' in ours ? ours.error : 'read'}`);
      continue;
    }
    const a = new Set(theirs.map(key));
    const b = new Set(ours.map(key));
    check.entries += a.size;
    const onlyReference = onlyIn(a, b);
    const onlyOther = onlyIn(b, a);
    if (onlyReference.length === 0 && onlyOther.length === 0) check.matches++;
    else mismatch(`${reader}: ${shownDifference(reference.name, onlyReference)}, ${shownDifference(other.name, onlyOther)}`);
  }
  return check;
}

/** Readers' whole timelines through feedmill's HTTP API, scrolled with its cursors (past any cap, from the pull path). */
export async function feedmillTimelines(baseUrl: string, readers: readonly string[]): Promise<Map<string, NewestPage>> {
  const api = new FeedClient(baseUrl);
  const timelines = new Map<string, NewestPage>();
  for (const reader of readers) {
    const entries = await api.readAll(`timeline:${reader}`, MAX_PAGE).then(
      (items) => items.map(({ actor, object }) => ({ actor, object })),
      (error: Error) => ({ error: error.message }),
    );
    timelines.set(reader, entries);
  }
  return timelines;
}

/** The largest page the HTTP API gives. */
const MAX_PAGE = 100;
