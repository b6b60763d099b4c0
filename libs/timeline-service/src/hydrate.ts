import { isReference, type Activity, type TimelineItem } from '@feedmill/contracts';

/** The most references one request to content hydrates: a flat page's most. */
export const HYDRATE_CHUNK = 100;

/**
 * `items` with each reference replaced by its activity from `get`, in order; a reference
 * whose activity is gone (removed since) is left out. `get` is asked in requests of at most
 * {@link HYDRATE_CHUNK} ids, side by side: a reply must fit in one NATS message, and an
 * aggregated read hydrates up to 10,000 references at once.
 */
export async function hydrate(items: readonly TimelineItem[], get: (ids: string[]) => Promise<Activity[]>): Promise<Activity[]> {
  const ids = items.filter(isReference).map((item) => item.id);
  if (ids.length === 0) return items as Activity[];
  const chunks = Array.from({ length: Math.ceil(ids.length / HYDRATE_CHUNK) }, (_, i) => ids.slice(i * HYDRATE_CHUNK, (i + 1) * HYDRATE_CHUNK));
  const found = new Map((await Promise.all(chunks.map(get))).flat().map((activity) => [activity.id, activity]));
  return items.flatMap((item) => (isReference(item) ? (found.has(item.id) ? [found.get(item.id)!] : []) : [item]));
}
