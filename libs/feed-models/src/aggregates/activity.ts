import {
  assertBatchFits,
  batchEventBytes,
  FeedmillError,
  type ActivitiesAdded,
  type Activity,
  type ActivityAdded,
  type ActivityBumped,
  type ActivityRemoved,
  type ActivityUpdated,
  type ContentErased,
  type FeedErased,
  type FeedEvent,
  type FeedId,
  type NewActivity,
} from '@feedmill/contracts';
import { sameJson } from '../same-json.js';

/**
 * An activity as an aggregate: `decide` turns a command and the activity's state into
 * events, `evolve` gives the state after an event. Both are pure: ids and times come in with
 * the command. Services append what `decide` returns; every projection of activities (memory
 * and MongoDB stores, tests' reference models) stores what `evolve` returns.
 */
export type ActivityEvent = ActivityAdded | ActivityRemoved | ActivityBumped | ActivityUpdated;

const singleActivityEventTypes: ReadonlySet<string> = new Set<ActivityEvent['type']>(['ActivityAdded', 'ActivityRemoved', 'ActivityBumped', 'ActivityUpdated']);
export const isActivityEvent = (event: FeedEvent): event is ActivityEvent => singleActivityEventTypes.has(event.type);
/**
 * The types of logged events that hold activity events, a batch of adds among them: what a
 * projection of activities reads (and decodes into single events with `eventItems`). With
 * them, a feed's erasure, and the tombstones left where erased content stood (they change
 * nothing, but hold their streams' revisions).
 */
export const activityEventTypes: ReadonlySet<string> = new Set<(ActivityEvent | ActivitiesAdded | FeedErased | ContentErased)['type']>([
  'ActivityAdded',
  'ActivityRemoved',
  'ActivityBumped',
  'ActivityUpdated',
  'ActivitiesAdded',
  'FeedErased',
  'ContentErased',
]);

export type ActivityCommand =
  | { type: 'AddActivity'; data: { feed: FeedId; activity: NewActivity & { time?: string }; id: string; receivedAt: string } }
  | { type: 'RemoveActivity'; data: { feed: FeedId; id: string; time: string } }
  | { type: 'BumpActivity'; data: { feed: FeedId; id: string; time: string } }
  | { type: 'UpdateActivity'; data: { feed: FeedId; id: string; time: string; object?: string; extra?: Record<string, unknown> } };

/** Many adds, to many feeds, decided together and recorded as one event: an import. */
export interface AddActivitiesCommand {
  type: 'AddActivities';
  data: { id: string; receivedAt: string; activities: ReadonlyArray<{ feed: FeedId; id: string; activity: NewActivity & { time?: string } }> };
}

/**
 * `state` is the activity the command is about as the projection holds it: for an add, the
 * one the feed already holds under the same `foreignId` (a repeated add decides nothing and
 * answers that one); otherwise the activity with the command's id.
 */
export function decideActivity(command: ActivityCommand, state: Activity | undefined): ActivityEvent[] {
  switch (command.type) {
    case 'AddActivity': {
      if (state) return [];
      const { feed, id, receivedAt } = command.data;
      const { actor, verb, object, time, foreignId, extra, to, refs } = command.data.activity;
      const activity: Activity = {
        id,
        feed,
        actor,
        verb,
        object,
        time: time ?? receivedAt,
        ...(foreignId === undefined ? {} : { foreignId }),
        ...(extra === undefined ? {} : { extra }),
        ...(to === undefined || to.length === 0 ? {} : { to: to as FeedId[] }),
        ...(refs === undefined || refs.length === 0 ? {} : { refs }),
      };
      return [{ type: 'ActivityAdded', data: { activity } }];
    }
    case 'RemoveActivity': {
      // The feeds it was addressed to hold it too: the removal reaches them without a lookup.
      const { to } = inFeed(state, command.data);
      return [{ type: 'ActivityRemoved', data: { ...command.data, ...(to === undefined ? {} : { to }) } }];
    }
    case 'BumpActivity':
      // A bump no later than the activity's current relevance changes nothing and records nothing.
      return command.data.time <= relevanceOf(inFeed(state, command.data)) ? [] : [{ type: 'ActivityBumped', data: { ...command.data } }];
    case 'UpdateActivity': {
      // Only what differs is recorded; an update that changes nothing records nothing.
      const current = inFeed(state, command.data);
      const { id, feed, time, object, extra } = command.data;
      const changesObject = object !== undefined && object !== current.object;
      const changesExtra = extra !== undefined && !sameJson(extra, current.extra);
      if (!changesObject && !changesExtra) return [];
      return [{ type: 'ActivityUpdated', data: { id, feed, time, ...(changesObject && { object }), ...(changesExtra && { extra }) } }];
    }
  }
}

/**
 * Decides each add of a batch as {@link decideActivity} decides it alone, in order, and puts
 * the new activities in one `ActivitiesAdded` (none when nothing is new). `held` gives the
 * activity a feed already holds under a foreignId; an item repeating one held, or one added
 * earlier in the batch, adds nothing and names that first activity. Returns the event and
 * the activity each item names, in the command's order. Refuses a batch whose event would
 * not fit the log.
 */
export function decideAddActivities(
  command: AddActivitiesCommand,
  held: (feed: FeedId, foreignId: string) => Activity | undefined,
): { events: ActivitiesAdded[]; activities: Activity[] } {
  const { id: batch, receivedAt } = command.data;
  const addedHere = new Map<string, Activity>();
  const added: Activity[] = [];
  const activities = command.data.activities.map(({ feed, id, activity }) => {
    const key = activity.foreignId === undefined ? undefined : foreignIdKey(feed, activity.foreignId);
    const state = key === undefined ? undefined : (addedHere.get(key) ?? held(feed, activity.foreignId!));
    const [event] = decideActivity({ type: 'AddActivity', data: { feed, activity, id, receivedAt } }, state);
    if (!event) return state!;
    const stored = evolveActivity(undefined, event)!;
    added.push(stored);
    if (key !== undefined) addedHere.set(key, stored);
    return stored;
  });
  if (added.length === 0) return { events: [], activities };
  const event: ActivitiesAdded = { type: 'ActivitiesAdded', data: { id: batch, activities: added } };
  assertBatchFits(batchEventBytes(event), added.length, 'activities');
  return { events: [event], activities };
}

/** One key per (feed, foreignId): what makes an add idempotent. */
export function foreignIdKey(feed: FeedId, foreignId: string): string {
  return `${feed}\n${foreignId}`;
}

/**
 * The activity after `event`: undefined once removed. A bump or an update of an activity not
 * held changes nothing. An update replaces the object or extra it carries and stamps
 * `updatedAt` with its time; `time` and `bumpedAt`, which place the activity, stay.
 */
export function evolveActivity(state: Activity | undefined, event: ActivityEvent): Activity | undefined {
  switch (event.type) {
    case 'ActivityAdded':
      return event.data.activity;
    case 'ActivityRemoved':
      return undefined;
    case 'ActivityBumped':
      return state && inSchemaOrder({ ...state, bumpedAt: event.data.time });
    case 'ActivityUpdated': {
      if (!state) return undefined;
      const { object, extra, time } = event.data;
      return inSchemaOrder({ ...state, ...(object !== undefined && { object }), ...(extra !== undefined && { extra }), updatedAt: time });
    }
  }
}

/**
 * The activity with its fields in the order of its schema, the order a decode of the log
 * gives them: a version evolved here and one restored from a snapshot or read back from the
 * log then serialize to the same JSON.
 */
function inSchemaOrder(activity: Activity): Activity {
  const { id, feed, actor, verb, object, time, foreignId, extra, bumpedAt, updatedAt, to, refs } = activity;
  const ordered: Activity = { id, feed, actor, verb, object, time };
  if (foreignId !== undefined) ordered.foreignId = foreignId;
  if (extra !== undefined) ordered.extra = extra;
  if (bumpedAt !== undefined) ordered.bumpedAt = bumpedAt;
  if (updatedAt !== undefined) ordered.updatedAt = updatedAt;
  if (to !== undefined) ordered.to = to;
  if (refs !== undefined) ordered.refs = refs;
  return ordered;
}

/** The id of the activity an event is about. */
export function activityIdOf(event: ActivityEvent): string {
  return event.type === 'ActivityAdded' ? event.data.activity.id : event.data.id;
}

/** The activity's time, raised by its last bump. */
function relevanceOf(activity: Activity): string {
  return activity.bumpedAt !== undefined && activity.bumpedAt > activity.time ? activity.bumpedAt : activity.time;
}

function inFeed(state: Activity | undefined, command: { feed: FeedId; id: string }): Activity {
  if (!state || state.feed !== command.feed) throw new FeedmillError('activity_not_found', `activity ${command.id} is not in feed ${command.feed}`, 'activityId');
  return state;
}
