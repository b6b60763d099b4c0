import { subjects, type Activity, type ActivityPage, type WrittenActivityPage } from '@feedmill/contracts';

/** The subjects whose reply is a page of activities. */
export type PageSubject = typeof subjects.timeline.read | typeof subjects.content.recent;

/**
 * A page of activities with its items already written as JSON, which is all an HTTP page
 * is made of: the process that holds the activities writes them, and the one that answers
 * HTTP only frames them. The same shape crosses NATS as `feed.timeline.read-written`'s reply.
 */
export type WrittenPage = WrittenActivityPage;

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

/** A page whose activities this process holds and may serve again: written from {@link activityJson}. */
export function writeHeldPage(page: ActivityPage): WrittenPage {
  let itemsJson = '';
  for (let i = 0; i < page.items.length; i++) itemsJson += (i === 0 ? '' : ',') + activityJson(page.items[i]!);
  return { itemsJson, next: page.next, newest: page.newest };
}

/** A page that arrived from elsewhere and is served once: written in one go, nothing kept. */
export function writeArrivedPage(page: ActivityPage): WrittenPage {
  return { itemsJson: JSON.stringify(page.items).slice(1, -1), next: page.next, newest: page.newest };
}
