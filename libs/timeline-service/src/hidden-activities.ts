import { FeedmillError, feedEvents, feedOwner, hiddenStream, subjects, type ActivityHidden, type ActivityShown, type FeedId, type HiddenPage, type HiddenPageRequest, type HideReply, type HideRequest, type SortKey } from '@feedmill/contracts';
import { streamOf } from '@feedmill/feed-models';
import type { FeedGroups } from '@feedmill/config';
import { WrongExpectedVersionError, type EventLog, type ExpectedVersion } from '@feedmill/event-log';
import type { TimelineStore } from '@feedmill/stores';
import type { ServiceClient } from '@feedmill/transport';

/** Reads of the timeline one page may take: a page past that many is answered short, its cursor going on from there. */
const MOST_READS_PER_PAGE = 16;

/**
 * A page of `limit` entries a reader sees, full when `keep` leaves some out (what the reader
 * hid, references whose activity is gone, entries addressed from a feed the reader may no
 * longer read): the timeline is read again from where it stopped for as many entries as were
 * left out, until the page is full or the timeline ends, or (with `above`) its entries reach
 * that key, or it was read {@link MOST_READS_PER_PAGE} times (a timeline holding more left out
 * than that: the page comes short, and its cursor goes on). The cursor is the last read's, so
 * the next page starts right after the last entry looked at, kept or not. A reader whose
 * entries are all kept reads once.
 */
export async function readFullPage<Item, Kept>(
  read: (before: SortKey | undefined, limit: number) => Promise<{ items: Item[]; next: SortKey | null }>,
  keep: (items: Item[]) => Promise<Kept[]>,
  before: SortKey | undefined,
  limit: number,
  above?: SortKey,
): Promise<{ items: Kept[]; next: SortKey | null }> {
  const items: Kept[] = [];
  let next: SortKey | null = null;
  let from = before;
  let reads = 0;
  do {
    const page = await read(from, limit - items.length);
    items.push(...(await keep(page.items)));
    next = page.next;
    from = page.next ?? undefined;
  } while (items.length < limit && next !== null && (above === undefined || next > above) && ++reads < MOST_READS_PER_PAGE);
  return { items, next };
}

/** How many times a hiding is tried again when another one for the same reader was appended first. */
const APPEND_ATTEMPTS = 3;

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
   * showing what is not, writes nothing. Whether it is hidden is read from the reader's
   * stream of the log, not from the timeline (which may not have applied the last hiding
   * yet), and the append expects that stream's revision, so that a hiding and a showing
   * racing each other keep their order. Hiding needs an activity content knows whose feed
   * the timeline's owner may read (`activity_not_found` otherwise, alike for both); showing
   * does not, so that an id hidden before its activity was removed can be shown again.
   * Answers once the timeline has applied the answer's state, `unavailable` (retryable)
   * when it has not within the wait.
   */
  async hide(request: HideRequest): Promise<HideReply> {
    const { feed, id, hidden } = request;
    if (!this.groups.isTimeline(feed)) throw new FeedmillError('invalid_request', `${feed} is not a timeline feed: only a reader's timeline hides activities`, 'group');
    if (!this.store.keepsHidden) throw new FeedmillError('invalid_request', `${feed}: timelines kept in MongoDB do not hide activities (use the memory store)`, 'group');
    if (hidden) await this.requireReadable(feed, id);
    for (let attempt = 1; ; attempt++) {
      const { revision, last } = await this.lastOf(feed, id);
      if ((last?.hidden ?? false) === hidden) {
        // Already so in the log: answer once the timeline shows it so too.
        await this.requireApplied(last?.position ?? 0);
        return { id, hidden, position: 0 };
      }
      const event: ActivityHidden | ActivityShown = { type: hidden ? 'ActivityHidden' : 'ActivityShown', data: { feed, id, time: request.time } };
      let position: number;
      try {
        ({ position } = await this.log.appendToStream(streamOf(event), [feedEvents.encode(event)], { expectedVersion: revision }));
      } catch (error) {
        if (error instanceof WrongExpectedVersionError && attempt < APPEND_ATTEMPTS) continue;
        throw error;
      }
      await this.requireApplied(position);
      return { id, hidden, position };
    }
  }

  /** The reader's hidden ids, newest hiding first. */
  async page(request: HiddenPageRequest): Promise<HiddenPage> {
    const hidden = await this.store.hiddenOf(request.feed);
    return hidden ? hidden.page(request.after, request.limit) : { items: [], next: null };
  }

  /**
   * Throws `activity_not_found` unless content knows `id` (once it has applied the log as it
   * stands now, so that an activity just posted through another replica counts) and the
   * timeline's owner may read its feed: the same answer for both, so that hiding tells
   * nothing of activities in feeds the reader may not read.
   */
  private async requireReadable(feed: FeedId, id: string): Promise<void> {
    const [activity] = await this.client.request(subjects.content.get, { ids: [id], atLeast: await this.log.headPosition() });
    if (activity === undefined || !(await this.ownerMayRead(feed, activity.feed))) {
      throw new FeedmillError('activity_not_found', `activityId: no activity ${id}`, 'activityId');
    }
  }

  /** Whether the owner of the timeline `reader` may read `feed`: its own, or by graph's may-read. */
  private async ownerMayRead(reader: FeedId, feed: FeedId): Promise<boolean> {
    const owner = feedOwner(reader);
    if (feedOwner(feed) === owner) return true;
    if (this.groups.isTimeline(feed)) return false;
    return (await this.client.request(subjects.graph.mayRead, { feed, readers: this.groups.timelinesOf(owner) })).allowed;
  }

  /** The revision of the reader's hiding stream and its last hiding or showing of `id`, as the log has them. */
  private async lastOf(reader: FeedId, id: string): Promise<{ revision: ExpectedVersion; last: { hidden: boolean; position: number } | undefined }> {
    const events = await this.log.readStream(hiddenStream(reader));
    let last: { hidden: boolean; position: number } | undefined;
    for (const recorded of events) {
      const event = feedEvents.decode(recorded);
      if ((event?.type === 'ActivityHidden' || event?.type === 'ActivityShown') && event.data.id === id) last = { hidden: event.type === 'ActivityHidden', position: recorded.position };
    }
    return { revision: events.length === 0 ? 'no_stream' : events[events.length - 1]!.revision, last };
  }

  private async requireApplied(position: number): Promise<void> {
    if (position > 0 && !(await this.reach(position)).reached) {
      throw new FeedmillError('unavailable', `the reader's timeline has not applied position ${position} yet: try again`);
    }
  }
}
