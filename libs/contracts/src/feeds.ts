import { z } from 'zod';

/** Ids and group names travel in URLs, NATS subjects and log stream names: keep them plain. */
export const ID_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;
export const GROUP_PATTERN = /^[a-z][a-z0-9_]{0,31}$/;

export const idSchema = z
  .string()
  .regex(ID_PATTERN, 'must be 1 to 128 characters of A-Z, a-z, 0-9, "_" or "-"');
export const groupSchema = z.string().regex(GROUP_PATTERN, 'must be 1 to 32 characters of a-z, 0-9 or "_", starting with a letter');

/** A feed is `group:id`, for example `user:bob` or `timeline:alice`. */
export type FeedId = `${string}:${string}`;

export const feedIdSchema = z
  .string()
  .refine((value) => isFeedId(value), 'must be "group:id"') as unknown as z.ZodType<FeedId>;

export function isFeedId(value: string): value is FeedId {
  const colon = value.indexOf(':');
  return colon > 0 && GROUP_PATTERN.test(value.slice(0, colon)) && ID_PATTERN.test(value.slice(colon + 1));
}

export function feedId(group: string, id: string): FeedId {
  return `${group}:${id}`;
}

export function feedGroup(feed: FeedId): string {
  return feed.slice(0, feed.indexOf(':'));
}
