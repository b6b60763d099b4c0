import { Inject, Injectable } from '@nestjs/common';
import {
  approximateBytes,
  FeedmillError,
  keyOfOrder,
  type Activity,
  type ActivityPage,
  type AddActivitiesRequest,
  type AddActivityRequest,
  type BumpActivityRequest,
  type GetActivitiesRequest,
  type ActivityPositionsReply,
  type RecentActivitiesRequest,
  type RecentEachReply,
  type RecentEachRequest,
  type SliceRequest,
  type RemoveActivityRequest,
  type EraseFeedReply,
  type EraseFeedRequest,
  type FeedLogEvent,
  type UpdateActivityRequest,
} from '@feedmill/contracts';
import { EVENT_LOG, type EventLog } from '@feedmill/event-log';
import { decideActivity, decideAddActivities, evolveActivity, foreignIdKey, newerThan, newestKeyOf, streamOf, type ActivityCommand } from '@feedmill/feed-models';
import { ProjectedService, SerialQueues } from '@feedmill/runtime';
import { CONTENT_STORE, type ContentStore } from '@feedmill/stores';

/** Conflicts an erasure catches up past before it fails: every post to its feed, on any replica, is one. */
const ERASURE_CONFLICT_RETRIES = 20;

interface PendingAdd {
  activity: Activity;
  durable: Promise<unknown>;
}

/** Activities: decides and appends adds, removes, bumps and updates, and answers queries from its projection. */
@Injectable()
export class ContentService extends ProjectedService {
  /** Commands on one feed decide one after another, each on the state the last one left. */
  private readonly perFeed = new SerialQueues();
  private readonly addsInFlight = new Map<string, PendingAdd>();

  constructor(
    @Inject(EVENT_LOG) private readonly log: EventLog,
    @Inject(CONTENT_STORE) private readonly store: ContentStore,
  ) {
    super(log, store);
  }

  /**
   * Decides and queues under the feed's serial section, then waits for durability outside
   * it: posts to one busy feed share group commits instead of taking one fsync each.
   */
  add(request: AddActivityRequest): Promise<Activity> {
    return this.writer.decideWithRetry(async () => {
      const { activity, durable } = await this.perFeed.run(request.feed, () => this.decideAdd(request));
      await durable;
      return activity;
    });
  }

  private async decideAdd(request: AddActivityRequest): Promise<PendingAdd> {
    const { foreignId } = request.activity;
    const key = foreignId === undefined ? undefined : foreignIdKey(request.feed, foreignId);
    // A second add with the same foreignId while the first is on its way to disk gets the first.
    const inFlight = key === undefined ? undefined : this.addsInFlight.get(key);
    if (inFlight) return inFlight;
    const sameForeignId = foreignId === undefined ? undefined : await this.confirmed([{ feed: request.feed, foreignId }]).then((held) => held.get(key!));
    const [added] = decideActivity({ type: 'AddActivity', data: request }, sameForeignId);
    if (!added) return { activity: sameForeignId!, durable: Promise.resolve() };
    const { durable } = await this.writer.enqueue(streamOf(added), added);
    const pending = { activity: evolveActivity(undefined, added)!, durable };
    if (key !== undefined) this.markInFlight(key, pending);
    return pending;
  }

  /**
   * The activities these foreignIds name, by `foreignIdKey`. An add that names one appends
   * nothing, so no stream revision fences it: one found here is confirmed once this replica
   * has read the log as far as it goes, since a removal or an erasure another replica made
   * of it, and acknowledged, may not have reached this projection yet, and an add answered
   * with it would be acknowledged and gone. A log this process alone appends to has no
   * other replica: what its projection holds is current.
   */
  private async confirmed(named: ReadonlyArray<{ feed: Activity['feed']; foreignId: string }>): Promise<Map<string, Activity>> {
    const found = async () => {
      const held = new Map<string, Activity>();
      await Promise.all(
        named.map(async ({ feed, foreignId }) => {
          const activity = await this.store.byForeignId(feed, foreignId);
          if (activity) held.set(foreignIdKey(feed, foreignId), activity);
        }),
      );
      return held;
    };
    const held = await found();
    if (held.size === 0 || this.log.soleWriter) return held;
    await this.writer.caughtUp();
    return found();
  }

  /** Until `pending` is durable, a second add with its foreignId gets it instead of deciding. */
  private markInFlight(key: string, pending: PendingAdd): void {
    this.addsInFlight.set(key, pending);
    void pending.durable
      .finally(() => {
        if (this.addsInFlight.get(key) === pending) this.addsInFlight.delete(key);
      })
      .catch(() => undefined);
  }

  /**
   * Adds many activities, to many feeds, as one event (an `ActivitiesAdded` in a stream of
   * its own), all or none, and returns the activity each item names, in order: a repeated
   * foreignId names the first activity, as a single add does.
   *
   * It decides in the serial section of every feed it adds to, so that in this process an
   * add or another import of the same foreignId comes wholly before or after it. Across
   * content replicas that is not so: an append checks the revision of one stream, the
   * batch's own, so an import and an add of the same foreignId to the same feed on two
   * replicas at the same moment can both be recorded (feed streams' revisions guard single
   * adds against each other only). Imports of one feed's history are best sent to one replica
   * at a time, or with foreignIds no live add uses.
   */
  addMany(request: AddActivitiesRequest): Promise<Activity[]> {
    return this.writer.decideWithRetry(async () => {
      const { activities, durable } = await this.perFeed.runAll(
        request.activities.map((item) => item.feed),
        () => this.decideAddMany(request),
      );
      await durable;
      return activities;
    });
  }

  private async decideAddMany(request: AddActivitiesRequest): Promise<{ activities: Activity[]; durable: Promise<unknown> }> {
    const keys = new Map<string, { feed: Activity['feed']; foreignId: string }>();
    for (const { feed, activity } of request.activities) {
      if (activity.foreignId !== undefined) keys.set(foreignIdKey(feed, activity.foreignId), { feed, foreignId: activity.foreignId });
    }
    // Adds of these foreignIds still on their way to disk are waited for, so that the batch
    // decides on what is durable: one that fails leaves nothing the batch could name.
    await Promise.allSettled([...keys.keys()].flatMap((key) => this.addsInFlight.get(key)?.durable ?? []));
    const held = await this.confirmed([...keys.values()]);
    const { events, activities } = decideAddActivities({ type: 'AddActivities', data: request }, (feed, foreignId) => held.get(foreignIdKey(feed, foreignId)));
    const [added] = events;
    if (!added) return { activities, durable: Promise.resolve() };
    const { durable } = await this.writer.enqueue(streamOf(added), added);
    for (const activity of added.data.activities) {
      if (activity.foreignId !== undefined) this.markInFlight(foreignIdKey(activity.feed, activity.foreignId), { activity, durable });
    }
    return { activities, durable };
  }

  remove(request: RemoveActivityRequest): Promise<void> {
    return this.perFeed.run(request.feed, () =>
      this.writer.decideWithRetry(async () => {
        await this.decideOnExisting({ type: 'RemoveActivity', data: request });
      }),
    );
  }

  /**
   * Erases a feed: one `FeedErased`, which every projection applies (its activities, edges,
   * requests, settings and timeline go), and once it is durable the log layer destroys the
   * feed's keys, so that its content in the log reads as tombstones from then on. Decided in
   * the feed's serial section: a post to the feed queued before it is sealed with the old key
   * and erased with it; one after, with a new key. Appended to the feed's activity stream at
   * the revision this replica holds, so that a post another replica decides at the same
   * moment comes wholly before it (and is erased) or, its expected revision gone, is decided
   * again after it (see `streamOf`); a replica deciding on a store shared with the eraser
   * finds the erasure's key destroyed before it seals (see `SealedEventLog`). Posts on other
   * replicas move the stream too, so an erasure retries its conflicts longer than a post.
   */
  erase(request: EraseFeedRequest): Promise<EraseFeedReply> {
    return this.perFeed.run(request.feed, () =>
      this.writer.decideWithRetry(async () => {
        const erasure: FeedLogEvent = { type: 'FeedErased', data: { feed: request.feed, time: request.time } };
        const position = await this.writer.append(streamOf(erasure), erasure);
        return { erased: true as const, position };
      }, ERASURE_CONFLICT_RETRIES),
    );
  }

  async get(request: GetActivitiesRequest): Promise<Activity[]> {
    await this.store.reach(request.atLeast);
    return this.store.get(request.ids);
  }

  /** Where in the log each activity was added: what places it within a bounded or kept edge. */
  async positions(request: GetActivitiesRequest): Promise<ActivityPositionsReply> {
    await this.store.reach(request.atLeast);
    return { positions: await this.store.positionsOf(request.ids) };
  }

  /** Raises an activity for relevancy-ordered timelines; returns it as it now is. */
  bump(request: BumpActivityRequest): Promise<Activity> {
    return this.perFeed.run(request.feed, () =>
      this.writer.decideWithRetry(async () => (await this.decideOnExisting({ type: 'BumpActivity', data: request }))!),
    );
  }

  /**
   * Replaces an activity's object or extra in place; returns it as it now is. An update that
   * changes nothing records nothing and returns the activity as it was.
   */
  update(request: UpdateActivityRequest): Promise<Activity> {
    return this.perFeed.run(request.feed, () =>
      this.writer.decideWithRetry(async () => (await this.decideOnExisting({ type: 'UpdateActivity', data: request }))!),
    );
  }

  /** Decides a command on the activity it names, appends the events, and returns the activity they leave. */
  private async decideOnExisting(command: Extract<ActivityCommand, { data: { id: string; feed: unknown; time: string } }>): Promise<Activity | undefined> {
    const [existing] = await this.store.get([command.data.id]);
    const events = decideActivity(command, existing);
    for (const event of events) await this.writer.append(streamOf(event), event);
    return events.reduce(evolveActivity, existing);
  }

  /** A page in the asked order, cut short (never empty) past `maxBytes`; `next` is a key of that order. */
  async recent(request: RecentActivitiesRequest): Promise<ActivityPage> {
    await this.store.reach(request.atLeast);
    const keyOf = keyOfOrder(request.order);
    if (request.after !== undefined) {
      if (request.before !== undefined) throw new FeedmillError('invalid_request', 'after: cannot be used with before', 'after');
      const newest = await this.store.recent(request.feeds, undefined, request.limit + 1, request.atMost, request.order, request.bounds);
      const page = newerThan(newest, request.after, request.limit, keyOf);
      return { ...page, newest: newestKeyOf(page.items, keyOf) };
    }
    const items = await this.store.recent(request.feeds, request.before, request.limit + 1, request.atMost, request.order, request.bounds);
    const page = pageOf(items, request.limit, request.maxBytes, request.order);
    return { ...page, newest: newestKeyOf(page.items, keyOf) };
  }

  /** A page of a slice (the activities that refer to a ref), by time, cut at `limit`; `next` is a time key. */
  async slice(request: SliceRequest): Promise<ActivityPage> {
    await this.store.reach(request.atLeast);
    return pageOf(await this.store.slice(request.ref, request.before, request.limit + 1), request.limit, undefined, 'time');
  }

  /**
   * A page of each feed, as {@link recent} answers one feed, while the pages so far stay
   * under `maxBytes`: the first is never left out (so that asking moves on), and every feed
   * after the budget is spent gets `null`.
   */
  async recentEach(request: RecentEachRequest): Promise<RecentEachReply> {
    await this.store.reach(request.atLeast);
    let budget = request.maxBytes ?? Infinity;
    const pages: RecentEachReply['pages'] = [];
    for (const feed of request.feeds) {
      if (budget <= 0) {
        pages.push(null);
        continue;
      }
      const items = await this.store.recent([feed], undefined, request.limit + 1, request.atMost, request.order);
      if (pages.length > 0 && items.length > 0 && approximateBytes(items[0]!) > budget) {
        budget = 0;
        pages.push(null);
        continue;
      }
      const page = pageOf(items, request.limit, budget, request.order);
      budget -= PAGE_BYTES + page.items.reduce((bytes, item) => bytes + approximateBytes(item), 0);
      pages.push(page);
    }
    return { pages };
  }
}

/** About the JSON of an empty page, `{"items":[],"next":null}`, and its comma. */
const PAGE_BYTES = 26;

/** `items` (up to limit + 1 of them) as a page of at most `limit`, cut short (never empty) past `maxBytes`. */
function pageOf(items: Activity[], limit: number, maxBytes: number | undefined, order: RecentActivitiesRequest['order']): ActivityPage {
  const fits = maxBytes === undefined || maxBytes === Infinity ? items.length : countWithin(items, maxBytes);
  if (items.length <= limit && fits === items.length) return { items, next: null };
  items.length = Math.min(limit, fits);
  return { items, next: keyOfOrder(order)(items[items.length - 1]!) };
}

/** How many of the first items fit in `maxBytes`: at least one, so that paging moves on. */
function countWithin(items: readonly Activity[], maxBytes: number): number {
  let bytes = 0;
  for (const [index, item] of items.entries()) {
    bytes += approximateBytes(item);
    if (bytes > maxBytes) return Math.max(1, index);
  }
  return items.length;
}
