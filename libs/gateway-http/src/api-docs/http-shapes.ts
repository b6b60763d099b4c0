import { z } from 'zod';
import {
  activityGroupSchema,
  activitySchema,
  hiddenEntrySchema,
  idSchema,
  errorCodes,
  feedIdSchema,
  GROUP_PATTERN,
  ID_PATTERN,
  serviceStatusSchema,
} from '@feedmill/contracts';

/**
 * The shapes of the HTTP API that exist only at its edge: path parameters, the pages and
 * answers the gateway frames around the services' replies, and the error body. Requests
 * are described by the very schemas that validate them (imported where the routes use
 * them); these complete the picture for the OpenAPI document.
 */

export const groupParam = z.string().regex(GROUP_PATTERN).meta({ description: 'A configured feed group, such as `user` or `timeline`.', example: 'user' });
export const idParam = z.string().regex(ID_PATTERN).meta({ description: '1 to 128 characters of `A-Z a-z 0-9 _ -`.', example: 'bob' });

export const feedPath = z.object({ group: groupParam, id: idParam });
export const activityPath = feedPath.extend({ activityId: idParam.meta({ description: 'The id the server gave the activity.', example: '0b9f5c1e-6f0c-4a44-8d0e-6f3d5c2b1a77' }) });
export const followPath = feedPath.extend({
  targetGroup: groupParam.meta({ description: 'The followed feed’s group: a producer group.', example: 'user' }),
  targetId: idParam,
});
export const followerPath = feedPath.extend({
  followerGroup: groupParam.meta({ description: 'The follower’s group: a timeline group.', example: 'timeline' }),
  followerId: idParam,
});
export const projectionPath = z.object({ projection: z.enum(['timeline']).meta({ description: 'The projection rebuilt on demand.' }) });

/** A page of activities, newest first; `next` is the cursor of the following page, `newest` the one to poll with. */
export const activityPageHttpSchema = z.object({
  items: z.array(activitySchema),
  next: z.string().nullable().meta({
    description:
      'Pass as `cursor` for the next (older) page; null at the end. On a read with `after`: set when more entries newer than `after` exist than the page holds (pass it as `cursor` to read on down to them), null when the page holds them all.',
  }),
  newest: z.string().nullable().meta({ description: 'The cursor of the page’s newest item: pass it as `after` to poll for what is newer. Null for an empty page (poll with the cursor you had).' }),
});

/** A page of a slice's activities: no `newest`, since a slice is not polled. */
export const slicePageHttpSchema = activityPageHttpSchema.omit({ newest: true });

/** A page of an aggregated feed's groups, newest first; a notification feed's adds its reader's counts. */
export const groupPageHttpSchema = z.object({
  items: z.array(activityGroupSchema),
  next: z.string().nullable().meta({ description: 'Pass as `cursor` for the next page; null at the end.' }),
  unseen: z.number().int().optional().meta({ description: 'Notification feeds: groups not seen.' }),
  unread: z.number().int().optional().meta({ description: 'Notification feeds: groups not read.' }),
});

/** The counts of a notification feed's reader after a marking. */
export const markCountsSchema = z.object({ unseen: z.number().int(), unread: z.number().int() });

/** Whether an activity is hidden from the reader's timeline, after a hide or show. */
export const hiddenStateSchema = z.object({ id: idSchema, hidden: z.boolean() });

/** A page of the activities a reader hid, newest hiding first. */
export const hiddenPageHttpSchema = z.object({
  items: z.array(hiddenEntrySchema),
  next: z.string().nullable().meta({ description: 'Pass as `cursor` for the next page; null at the end.' }),
});

/** A page of feeds: followers, followed feeds, follow requests. */
export const feedPageHttpSchema = z.object({
  items: z.array(z.object({ feed: feedIdSchema })),
  next: z.string().nullable().meta({ description: 'Pass as `cursor` for the next page; null at the end.' }),
});

export const pendingFollowSchema = z.object({ status: z.literal('pending') });
export const addedActivitiesSchema = z.object({ activities: z.array(activitySchema) });
export const healthSchema = z.object({ status: z.literal('ok') });
export const readinessSchema = z.object({
  ready: z.boolean(),
  services: z.array(serviceStatusSchema.extend({ error: z.string().optional() })),
});

/** Every error answer: `{ code, message, field }`. */
export const errorBodySchema = z.object({
  code: z.enum(errorCodes).meta({ description: 'Stable and machine-readable.' }),
  message: z.string().meta({ description: 'For people: says what is wrong and names the field.' }),
  field: z.string().optional().meta({ description: 'The path parameter, query parameter, header or body field at fault: `body.verb`, `follows[3].target`, `authorization`.' }),
});
