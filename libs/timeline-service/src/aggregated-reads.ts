import { FeedmillError, feedEvents, keyOfOrder, subjects, type Activity, type ActivityGroupItem, type AggregateRule, type SortKey, type FeedId, type GroupPage, type MarkReply, type MarkRequest, type NotificationsMarked, type ReadGroupsRequest, type ReadTimelineRequest } from '@feedmill/contracts';
import { groupActivities, pageOfGroups, streamOf, type ActivityGroup, type NotificationMarks, type TimelinePage } from '@feedmill/feed-models';
import type { FeedGroups } from '@feedmill/config';
import type { EventLog } from '@feedmill/event-log';
import type { TimelineStore } from '@feedmill/stores';
import type { ServiceClient } from '@feedmill/transport';

/** A group as a read shows it, with its place in the order. */
export type PlacedGroupItem = ActivityGroupItem & { key: SortKey };

/** An aggregated feed's first groups with their places, and a notification feed's counts. */
export interface PlacedGroupPage {
  groups: PlacedGroupItem[];
  unseen?: number;
  unread?: number;
}

/**
 * The most activities a read groups: a reader's newest `cap` activities, and no more than
 * one content query and one pull may carry.
 */
export const MAX_GROUPED_ACTIVITIES = 10_000;

/**
 * Reads of aggregated timelines, and the marks of notification feeds, for one partition.
 *
 * Groups are computed at each read from the newest `cap` activities the reader's timeline
 * holds (read through the same path as a flat page, so every model and store serves them),
 * not stored: they are then a function of the timeline alone, which deliveries, removals and
 * updates already keep, and a rule changed in the config regroups all history at the next
 * start or rebuild. Computing all of a reader's groups at each read is what makes paging
 * exact with one cursor: a page holds whole groups, and the cursor is a place in the groups'
 * total order (their newest activity's key, then id), so no group is split across pages, and
 * none shows twice in one scroll unless it grew (it then moves above the cursor). A read costs
 * a walk over at most `cap` entries.
 */
export class AggregatedReads {
  constructor(
    private readonly groups: FeedGroups,
    private readonly log: EventLog,
    private readonly store: TimelineStore,
    private readonly readPage: (request: ReadTimelineRequest) => Promise<TimelinePage<Activity>>,
    private readonly reach: (position: number) => Promise<{ reached: boolean }>,
    private readonly client: ServiceClient,
  ) {}

  /**
   * The first `limit` groups, each with its place in the order (`key`), and the counts in a
   * notification feed: what a realtime stream compares between two readings.
   */
  async firstGroups(feed: FeedId, limit: number): Promise<PlacedGroupPage> {
    const all = await this.groupsOf(feed, this.ruleOf(feed));
    const first = all.slice(0, limit);
    if (!this.groups.isNotificationFeed(feed)) return { groups: first.map((group) => ({ ...shown(group), key: group.key })) };
    const marks = await this.store.notificationMarks(feed);
    return { groups: first.map((group) => ({ ...shown(group), key: group.key, seen: marks?.isSeen(group) ?? false, read: marks?.isRead(group) ?? false })), ...countsOf(all, marks) };
  }

  async page(request: ReadGroupsRequest): Promise<GroupPage> {
    const all = await this.groupsOf(request.feed, this.ruleOf(request.feed));
    const { items, next } = pageOfGroups(all, request.after, request.limit);
    if (!this.groups.isNotificationFeed(request.feed)) return { items: items.map(shown), next };
    const marks = await this.store.notificationMarks(request.feed);
    return { items: items.map((group) => ({ ...shown(group), seen: marks?.isSeen(group) ?? false, read: marks?.isRead(group) ?? false })), next, ...countsOf(all, marks) };
  }

  /**
   * Records a marking as a `NotificationsMarked` event, each group up to the log position of
   * its newest-recorded activity as the reader sees it now (all of them up to the highest),
   * so that an activity recorded later is new whatever its `time`, and answers the counts once the
   * reader's timeline has applied it (`unavailable`, retryable, when it has not within the
   * wait: the marking is written and applies later). An id that names none of the reader's groups is refused,
   * and nothing is written. A reader with no groups marks nothing.
   */
  async mark(request: MarkRequest): Promise<MarkReply> {
    if (!this.groups.isNotificationFeed(request.feed)) throw new FeedmillError('invalid_request', `${groupOf(request.feed)} feeds are not notification feeds: they keep no seen or read marks`, 'group');
    const all = await this.groupsOf(request.feed, this.ruleOf(request.feed));
    let event: NotificationsMarked | undefined;
    const base = { feed: request.feed, mark: request.mark, time: request.time };
    if (request.all) {
      const positions = all.flatMap((group) => (group.position === undefined ? [] : [group.position]));
      if (positions.length > 0) event = { type: 'NotificationsMarked', data: { ...base, allAt: Math.max(...positions) } };
    } else {
      const byId = new Map(all.map((group) => [group.id, group]));
      const unknown = (request.ids ?? []).filter((id) => !byId.has(id));
      if (unknown.length > 0) throw new FeedmillError('invalid_request', `ids: ${unknown.slice(0, 3).join(', ')} ${unknown.length === 1 ? 'names' : 'name'} no group of ${request.feed}`, 'ids');
      const ids = [...new Set(request.ids)];
      // A group whose activities content no longer places (removed meanwhile) is marked by key.
      event = { type: 'NotificationsMarked', data: { ...base, groups: ids.map((id) => markOf(byId.get(id)!)) } };
    }
    let position = 0;
    if (event) {
      ({ position } = await this.log.appendToStream(streamOf(event), [feedEvents.encode(event)]));
      // Counts read before the timeline applied the marking would answer it undone.
      if (!(await this.reach(position)).reached) throw new FeedmillError('unavailable', `the reader's timeline has not applied position ${position} yet: read the groups again`);
    }
    return { ...countsOf(all, await this.store.notificationMarks(request.feed)), position };
  }

  private ruleOf(feed: FeedId): AggregateRule {
    const rule = this.groups.aggregateRuleOf(feed);
    if (!rule) throw new FeedmillError('invalid_request', `${groupOf(feed)} feeds are not aggregated`, 'group');
    return rule;
  }

  private async groupsOf(feed: FeedId, rule: AggregateRule): Promise<ActivityGroup[]> {
    const { items } = await this.readPage({ feed, limit: Math.min(this.groups.capOf(feed), MAX_GROUPED_ACTIVITIES) });
    const keyOf = keyOfOrder(this.groups.timelinePolicyOf(feed).relevancy ? 'relevance' : 'time');
    if (!this.groups.isNotificationFeed(feed) || items.length === 0) return groupActivities(items, rule, keyOf);
    // Marks compare log positions, which content keeps (the timeline holds activities, not
    // where the log recorded them); content answers once it has applied what the timeline has.
    const { positions } = await this.client.request(subjects.content.positions, { ids: items.map((activity) => activity.id), atLeast: await this.store.position() });
    return groupActivities(items, rule, keyOf, (_activity, index) => positions[index] ?? undefined);
  }
}

function groupOf(feed: FeedId): string {
  return feed.slice(0, feed.indexOf(':'));
}

/** A group as readers get it: its place in the order stays inside (the cursor carries it), and so does its log position. */
function shown({ key: _key, position: _position, ...group }: ActivityGroup): Omit<ActivityGroup, 'key' | 'position'> {
  return group;
}

/** How a marking of one group records it: by the log position of its newest-recorded activity, or by key when content placed none. */
function markOf(group: ActivityGroup): { id: string; at: number } | { id: string; upTo: string } {
  return group.position === undefined ? { id: group.id, upTo: group.key } : { id: group.id, at: group.position };
}

function countsOf(groups: readonly ActivityGroup[], marks: NotificationMarks | undefined): { unseen: number; unread: number } {
  let unseen = 0;
  let unread = 0;
  for (const group of groups) {
    if (!marks?.isSeen(group)) unseen++;
    if (!marks?.isRead(group)) unread++;
  }
  return { unseen, unread };
}
