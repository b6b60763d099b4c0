import { createHash } from 'node:crypto';
import type { Activity, AggregateField, AggregateRule, SortKey } from '@feedmill/contracts';

/** The most actors and activities a group shows; its counts count them all. */
export const GROUP_SAMPLE_SIZE = 10;

/**
 * Activities of one timeline that share the values of the rule's `by` fields and fall in
 * the same time window. `verb` is always there (the newest activity's, when the rule does
 * not group by it); `object`, `actor` and `target` when the rule groups by them.
 */
export interface ActivityGroup {
  id: string;
  verb: string;
  object?: string;
  actor?: string;
  target?: string;
  activityCount: number;
  actorCount: number;
  /** Distinct actors, the newest first, up to {@link GROUP_SAMPLE_SIZE}. */
  actors: string[];
  /** The newest activities, up to {@link GROUP_SAMPLE_SIZE}. */
  activities: Activity[];
  /** The oldest activity's time: when the group began. */
  time: string;
  /** The newest activity's time: when it last grew. */
  updatedAt: string;
  /** Where it stands in the timeline: its newest activity's sort key. */
  key: SortKey;
  /**
   * The log position of its newest-recorded activity, when `positionOf` was given and knew
   * one: what seen and read marks compare, since a later activity may carry an older time.
   */
  position?: number;
}

/** A group's value of a `by` field: `target` is the activity's `extra.target`, when it is a string. */
export function fieldOf(activity: Activity, field: AggregateField): string | undefined {
  if (field !== 'target') return activity[field];
  const target = activity.extra?.['target'];
  return typeof target === 'string' ? target : undefined;
}

/** The start of the window an activity's time falls in, in milliseconds since the epoch. */
export function windowStartOf(time: string, rule: AggregateRule): number {
  const windowMs = rule.windowMinutes * 60_000;
  return Math.floor(Date.parse(time) / windowMs) * windowMs;
}

/**
 * The group an activity joins: its `by` values and its window, as one text. Two activities
 * join the same group exactly when their texts are equal.
 */
export function groupKeyOf(activity: Activity, rule: AggregateRule): string {
  return JSON.stringify([rule.by, rule.by.map((field) => fieldOf(activity, field) ?? null), windowStartOf(activity.time, rule)]);
}

/**
 * A group's id: a digest of its key, so that the same group has the same id on every read,
 * replica and rebuild (seen and read marks name groups by it), and a short one whatever the
 * length of its objects.
 */
export function groupIdOf(groupKey: string): string {
  return createHash('sha256').update(groupKey).digest('base64url').slice(0, 22);
}

/**
 * Groups a timeline's activities, given newest first in the timeline's order with `keyOf`
 * their sort keys in that order. Groups come newest first: by their newest activity's key
 * (so a group moves to the top when it gets a new activity), ties by id.
 *
 * Groups are a function of the activities alone: removals and updates (a new object moves
 * an activity to another group) change them as grouping the activities anew would. With
 * `positionOf`, each group's `position` is the highest of its activities' log positions.
 */
export function groupActivities(activities: readonly Activity[], rule: AggregateRule, keyOf: (activity: Activity) => SortKey, positionOf?: (activity: Activity, index: number) => number | undefined): ActivityGroup[] {
  const byKey = new Map<string, { group: ActivityGroup; actors: Set<string> }>();
  for (const [index, activity] of activities.entries()) {
    const groupKey = groupKeyOf(activity, rule);
    const found = byKey.get(groupKey);
    const position = positionOf?.(activity, index);
    if (!found) {
      const group: ActivityGroup = {
        id: groupIdOf(groupKey),
        verb: activity.verb,
        activityCount: 1,
        actorCount: 1,
        actors: [activity.actor],
        activities: [activity],
        time: activity.time,
        updatedAt: activity.time,
        key: keyOf(activity),
      };
      if (position !== undefined) group.position = position;
      for (const field of rule.by) {
        const value = fieldOf(activity, field);
        if (field !== 'verb' && value !== undefined) group[field] = value;
      }
      byKey.set(groupKey, { group, actors: new Set([activity.actor]) });
      continue;
    }
    const { group, actors } = found;
    group.activityCount++;
    if (position !== undefined && (group.position === undefined || position > group.position)) group.position = position;
    if (activity.time < group.time) group.time = activity.time;
    if (activity.time > group.updatedAt) group.updatedAt = activity.time;
    if (group.activities.length < GROUP_SAMPLE_SIZE) group.activities.push(activity);
    if (!actors.has(activity.actor)) {
      actors.add(activity.actor);
      group.actorCount++;
      if (group.actors.length < GROUP_SAMPLE_SIZE) group.actors.push(activity.actor);
    }
  }
  return [...byKey.values()].map(({ group }) => group).sort(newestGroupFirst);
}

/** Where a page of groups ends: the last group's key and id. */
export interface GroupCursor {
  key: SortKey;
  id: string;
}

function newestGroupFirst(a: { key: SortKey; id: string }, b: { key: SortKey; id: string }): number {
  return a.key === b.key ? (a.id < b.id ? 1 : a.id > b.id ? -1 : 0) : a.key < b.key ? 1 : -1;
}

/**
 * The `limit` groups after `after` (all from the top without it), and the cursor of the next
 * page when more follow. A page holds whole groups, and a cursor is a place in the groups'
 * total order (key, then id), not an offset: a group never shows on two pages of one scroll
 * unless it changed between them, and one that gets a new activity moves above the cursor,
 * where the next read from the top shows it.
 */
export function pageOfGroups(groups: readonly ActivityGroup[], after: GroupCursor | undefined, limit: number): { items: ActivityGroup[]; next: GroupCursor | null } {
  const start = after === undefined ? 0 : firstAfter(groups, after);
  const items = groups.slice(start, start + limit);
  const last = items[items.length - 1];
  return { items, next: start + limit < groups.length && last ? { key: last.key, id: last.id } : null };
}

/** The index of the first group strictly after the cursor, by binary search over the order. */
function firstAfter(groups: readonly ActivityGroup[], after: GroupCursor): number {
  let low = 0;
  let high = groups.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (newestGroupFirst(groups[middle]!, after) <= 0) low = middle + 1;
    else high = middle;
  }
  return low;
}
