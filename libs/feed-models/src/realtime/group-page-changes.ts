import type { SortKey } from '@feedmill/contracts';

/** A group as a stream compares it: its id, its place in the order (its newest activity's key), and the rest. */
export interface PlacedGroup {
  id: string;
  key: SortKey;
}

/**
 * One change to an aggregated feed's first page: a group now at `rank` (0 is the top), new
 * or changed; or a group that left the page other than by being pushed below it.
 */
export type GroupPageChange<G> = { type: 'group'; group: G; rank: number } | { type: 'groupRemoved'; id: string };

/**
 * What changed between two readings of an aggregated feed's first page (groups newest first,
 * each reading at most `limit` long), as steps a client applies in order to the page it
 * shows: first the groups that left it (lost every activity, or an unfollow took them out),
 * then, from the top, "take group X out wherever it is and put this version at rank r" for
 * each group that is new, changed (gained or lost an activity, an update, a mark) or not
 * where it was. Ranks are computed by applying the steps to the old page, so a client that
 * does the same ends with exactly the new page above whatever it kept below it; a group that
 * newer ones pushed below a full page is left where it was, one scroll down, as flat pages
 * leave their entries.
 */
export function groupPageChanges<G extends PlacedGroup>(before: readonly G[], after: readonly G[], limit: number, same: (a: G, b: G) => boolean): GroupPageChange<G>[] {
  const now = new Set(after.map((group) => group.id));
  // Below this place a group missing from a full page was pushed out, not taken out.
  const floor = after.length >= limit ? after[after.length - 1] : undefined;
  const changes: GroupPageChange<G>[] = [];
  const shown: G[] = [];
  for (const old of before) {
    if (now.has(old.id) || (floor !== undefined && isBelow(old, floor))) shown.push(old);
    else changes.push({ type: 'groupRemoved', id: old.id });
  }
  after.forEach((group, rank) => {
    const there = shown[rank];
    if (there !== undefined && there.id === group.id && same(there, group)) return;
    const at = shown.findIndex((old) => old.id === group.id);
    if (at >= 0) shown.splice(at, 1);
    shown.splice(rank, 0, group);
    changes.push({ type: 'group', group, rank });
  });
  return changes;
}

function isBelow(a: PlacedGroup, b: PlacedGroup): boolean {
  return a.key === b.key ? a.id < b.id : a.key < b.key;
}
