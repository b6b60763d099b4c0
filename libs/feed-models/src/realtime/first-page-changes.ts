import type { Activity, KeyOf } from '@feedmill/contracts';

/** One change to a feed's first page, before it is numbered as a stream event. */
export type FirstPageChange = { type: 'added' | 'updated'; activity: Activity } | { type: 'removed'; id: string };

/**
 * What changed between two readings of a feed's first page (each newest first, at most
 * `limit` long), oldest change first so that a client applying them in order ends with the
 * new page. An entry that left the page only because newer ones pushed it below is not
 * `removed`: it is still in the feed, one scroll down, and a client keeps it. An entry in
 * both readings whose JSON differs (an update, a bump) is `updated`.
 */
export function firstPageChanges(before: readonly Activity[], after: readonly Activity[], limit: number, keyOf: KeyOf, same: (a: Activity, b: Activity) => boolean): FirstPageChange[] {
  const now = new Map(after.map((activity) => [activity.id, activity]));
  const was = new Map(before.map((activity) => [activity.id, activity]));
  // Below this key an entry missing from a full page was pushed out, not taken out.
  const floor = after.length >= limit ? keyOf(after[after.length - 1]!) : undefined;
  const changes: FirstPageChange[] = [];
  for (const old of before) {
    if (now.has(old.id)) continue;
    if (floor !== undefined && keyOf(old) < floor) continue;
    changes.push({ type: 'removed', id: old.id });
  }
  for (let index = after.length - 1; index >= 0; index--) {
    const activity = after[index]!;
    const old = was.get(activity.id);
    if (old === undefined) changes.push({ type: 'added', activity });
    else if (!same(old, activity)) changes.push({ type: 'updated', activity });
  }
  return changes;
}
