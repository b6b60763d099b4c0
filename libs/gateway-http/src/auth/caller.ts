import { FeedmillError, type FeedId } from '@feedmill/contracts';

/**
 * Who is asking: the user a token names (`sub`), or a trusted backend (`admin`) that may act
 * for anyone, as an application's server posts on its users' behalf.
 */
export interface Caller {
  readonly sub: string | undefined;
  readonly admin: boolean;
  /** When the token it came with expires (epoch ms); none for a token without `exp`, or no token. */
  readonly expiresAtMs?: number;
  /** A digest of the token it came with, however it was sent: names an admin token's allowance, and holds no usable token. */
  readonly tokenDigest?: string;
}

/** Every request when no token is configured: the API is open, and says so at start. */
export const OPEN_ACCESS: Caller = Object.freeze({ sub: undefined, admin: true });

/** A caller who is nobody in particular: what it may read, anyone may. */
export const ANYONE: Caller = Object.freeze({ sub: undefined, admin: false });

/** A user owns every feed whose id is its `sub`, in every group: `user:alice`, `timeline:alice`. */
export function owns(caller: Caller, feed: FeedId): boolean {
  return caller.admin || (caller.sub !== undefined && feed.slice(feed.indexOf(':') + 1) === caller.sub);
}

/**
 * Throws `forbidden` unless the caller owns `feed`: posting, removing, bumping and updating in a feed,
 * following and unfollowing from a timeline, reading a timeline.
 */
export function requireOwner(caller: Caller, feed: FeedId, action: string, field = 'id'): void {
  if (owns(caller, feed)) return;
  throw new FeedmillError('forbidden', `${describeCaller(caller)} may not ${action} ${feed}: a user owns only the feeds whose id is its own`, field);
}

/** Throws `forbidden` unless the caller is a trusted backend. */
export function requireAdmin(caller: Caller, action: string): void {
  if (caller.admin) return;
  throw new FeedmillError('forbidden', `${describeCaller(caller)} may not ${action}: it takes an admin token`, 'authorization');
}

/** The caller as a refusal names it. */
export function describeCaller(caller: Caller): string {
  return caller.sub === undefined ? 'this token' : `user "${caller.sub}"`;
}
