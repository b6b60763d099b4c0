import { FeedmillError, feedEvents, subjects, type ActivityHidden, type ActivityShown, type FeedId, type HiddenPage, type HiddenPageRequest, type HideReply, type HideRequest, type SortKey } from '@feedmill/contracts';
import { streamOf, type HiddenActivities, type PullPath, type TimelinePage } from '@feedmill/feed-models';
import type { FeedGroups } from '@feedmill/config';
import type { EventLog } from '@feedmill/event-log';
import type { TimelineStore } from '@feedmill/stores';
import type { ServiceClient } from '@feedmill/transport';

/**
 * A page of the reader's timeline without what it hid, still full: the store is read again
 * from where it stopped for as many entries as hiding took out, until the page is full or the
 * timeline ends. The cursor is the last store page's, so the next page starts right after
 * the last entry looked at, hidden or not. Only readers who hid something come here.
 */
export async function readPastHidden(store: TimelineStore, reader: FeedId, before: SortKey | undefined, limit: number, pull: PullPath, hidden: HiddenActivities): Promise<TimelinePage> {
  const items: TimelinePage['items'] = [];
  let next: SortKey | null = null;
  let from = before;
  do {
    const page = await store.readPage(reader, from, limit - items.length, pull);
    for (const item of page.items) if (!hidden.has(item.id)) items.push(item);
    next = page.next;
    from = page.next ?? undefined;
  } while (items.length < limit && next !== null);
  return { items, next };
}

/**
 * Hiding activities from one's own timeline, for one partition: each hiding and showing is an
 * event in the reader's stream of the log (so a rebuild keeps it), answered once the reader's
 * timeline has applied it, so that the next read leaves the activity out.
 */
export class HidingActivities {
  constructor(
    private readonly groups: FeedGroups,
    private readonly log: EventLog,
    private readonly client: ServiceClient,
    private readonly store: TimelineStore,
    private readonly reach: (position: number) => Promise<{ reached: boolean }>,
  ) {}

  /**
   * Hides (or shows) `id` in the reader's timeline. Idempotent: hiding what is hidden, or
   * showing what is not, writes nothing and answers position 0. Hiding needs an activity
   * content knows (`activity_not_found` otherwise); showing does not, so that an id hidden
   * before its activity was removed can be shown again.
   */
  async hide(request: HideRequest): Promise<HideReply> {
    const { feed, id, hidden } = request;
    if (!this.groups.isTimeline(feed)) throw new FeedmillError('invalid_request', `${feed} is not a timeline feed: only a reader's timeline hides activities`, 'group');
    if (!this.store.keepsHidden) throw new FeedmillError('invalid_request', `${feed}: timelines kept in MongoDB do not hide activities (use the memory store)`, 'group');
    const now = (await this.store.hiddenOf(feed))?.has(id) ?? false;
    if (now === hidden) return { id, hidden, position: 0 };
    if (hidden && (await this.client.request(subjects.content.get, { ids: [id] })).length === 0) {
      throw new FeedmillError('activity_not_found', `activityId: no activity ${id}`, 'activityId');
    }
    const event: ActivityHidden | ActivityShown = { type: hidden ? 'ActivityHidden' : 'ActivityShown', data: { feed, id, time: request.time } };
    const { position } = await this.log.appendToStream(streamOf(event), [feedEvents.encode(event)]);
    await this.reach(position);
    return { id, hidden, position };
  }

  /** The reader's hidden ids, newest hiding first. */
  async page(request: HiddenPageRequest): Promise<HiddenPage> {
    const hidden = await this.store.hiddenOf(request.feed);
    return hidden ? hidden.page(request.after, request.limit) : { items: [], next: null };
  }
}
