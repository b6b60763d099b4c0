import type { Activity } from '@feedmill/contracts';

/**
 * Each activity's JSON, written once per activity object. Stores and projections never
 * change an activity in place (a bump or an update is a new object), and the memory stores
 * hand every reader the same object, so a page is written by joining ready strings
 * instead of serializing the same activities again on every read.
 */
const written = new WeakMap<Activity, string>();

export function activityJson(activity: Activity): string {
  let json = written.get(activity);
  if (json === undefined) written.set(activity, (json = JSON.stringify(activity)));
  return json;
}

/** `{ "items": [...], "next": ... }`, the body of every activity page. */
export function activityPageJson(items: readonly Activity[], next: string | null): string {
  let json = '{"items":[';
  for (let i = 0; i < items.length; i++) json += (i === 0 ? '' : ',') + activityJson(items[i]!);
  return `${json}],"next":${next === null ? 'null' : JSON.stringify(next)}}`;
}
