import { z } from 'zod';

/**
 * What a caller checks of a reply that may carry a thousand activities or ten thousand
 * feeds, instead of parsing it with its full schema. A full parse (strict objects, id and
 * feed patterns on every item) costs about 0.45 ms per 1,000 activities and 1 to 2.5 ms per
 * 10,000 feeds, as much as a read itself; these check the page's envelope and the fields
 * every item must have, as strings, in about a tenth of that. The items were valid when
 * they were built: a service answers from projections of validated events. What can go
 * wrong on the wire is a service of another version or a handler on the wrong subject,
 * and that shows in the shape. Unknown keys are let through, and the reply is used as it
 * came: the parsed copy is not.
 */
const activityFields = z.object({
  id: z.string(),
  feed: z.string(),
  actor: z.string(),
  verb: z.string(),
  object: z.string(),
  time: z.string(),
});

export const activityListCheck = z.array(activityFields);

export const activityPageCheck = z.object({ items: activityListCheck, next: z.string().nullable() });

export const edgePageCheck = z.object({ items: z.array(z.string()), next: z.string().nullable() });

export const recentEachReplyCheck = z.object({ pages: z.array(activityPageCheck.nullable()) });
