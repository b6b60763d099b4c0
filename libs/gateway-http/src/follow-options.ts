import { z } from 'zod';
import { FeedmillError, justAbove, sortKeyOf, type FeedId, type SortKey } from '@feedmill/contracts';
import { parseInput, recentActivities, type ServiceClient } from '@feedmill/transport';

/** Whole numbers as a query string carries them: no sign, no exponent, no blank. */
const countText = z.string().regex(/^\d{1,7}$/, 'must be a whole number');

export const followQuerySchema = z.strictObject({
  copyLimit: countText.optional().meta({ description: 'How many of the followed feed’s newest activities come into the timeline: 0 (none, only what is posted from now on) to the timeline group’s `cap`. Unset, its whole history, as far as the timeline holds it.' }),
});
export const unfollowQuerySchema = z.strictObject({
  keepHistory: z
    .enum(['true', 'false'], { message: 'must be true or false' })
    .optional()
    .meta({ description: '`true`: the timeline keeps what the feed delivered, and gets nothing new from it. By default the unfollow takes it out.' }),
});

/**
 * `PUT …/follows/…?copyLimit=N`: how many of the target's activities the follow brings into
 * the reader's timeline (getstream's `activity_copy_limit`), 0 to the reader group's cap.
 * Undefined without one: the whole history comes, as far as the timeline holds it.
 */
export function parseCopyLimit(query: unknown, cap: number): number | undefined {
  const { copyLimit } = parseInput(followQuerySchema, query ?? {}, 'query');
  if (copyLimit === undefined) return undefined;
  const limit = Number(copyLimit);
  if (limit > cap) throw new FeedmillError('invalid_request', `query.copyLimit: must be at most ${cap}, the reader's timeline cap`, 'query.copyLimit');
  return limit;
}

/** `DELETE …/follows/…?keepHistory=true`: the timeline keeps what the feed delivered. */
export function parseKeepHistory(query: unknown): boolean {
  return parseInput(unfollowQuerySchema, query ?? {}, 'query').keepHistory === 'true';
}

/**
 * The `since` bound a follow with a copy limit records: the time key of the target's
 * `limit`-th newest activity (by time), or just above its newest for 0; none when the
 * target holds no more than `limit`. An activity posted between this and the follow is
 * newer than the bound, and comes too.
 */
export async function sinceOfCopyLimit(client: ServiceClient, target: FeedId, limit: number): Promise<SortKey | undefined> {
  const newest = await recentActivities(client, { feeds: [target], limit: limit + 1 });
  if (newest.length <= limit) return undefined;
  return limit === 0 ? justAbove(sortKeyOf(newest[0]!)) : sortKeyOf(newest[limit - 1]!);
}

/** What a follow request carries of its options. */
export async function followOptions(client: ServiceClient, target: FeedId, query: unknown, cap: number): Promise<{ since?: SortKey }> {
  const limit = parseCopyLimit(query, cap);
  const since = limit === undefined ? undefined : await sinceOfCopyLimit(client, target, limit);
  return since === undefined ? {} : { since };
}
