import { Inject, Injectable } from '@nestjs/common';
import {
  approximateBytes,
  keyOfOrder,
  type Activity,
  type ActivityPage,
  type AddActivityRequest,
  type BumpActivityRequest,
  type GetActivitiesRequest,
  type RecentActivitiesRequest,
  type RemoveActivityRequest,
} from '@feedmill/contracts';
import { EVENT_LOG, type EventLog } from '@feedmill/event-log';
import { decideActivity, evolveActivity, streamOf, type ActivityCommand } from '@feedmill/feed-models';
import { ProjectedService, SerialQueues } from '@feedmill/runtime';
import { CONTENT_STORE, type ContentStore } from '@feedmill/stores';

interface PendingAdd {
  activity: Activity;
  durable: Promise<void>;
}

/** Activities: decides and appends adds and removes, and answers queries from its projection. */
@Injectable()
export class ContentService extends ProjectedService {
  /** Commands on one feed decide one after another, each on the state the last one left. */
  private readonly perFeed = new SerialQueues();
  private readonly addsInFlight = new Map<string, PendingAdd>();

  constructor(
    @Inject(EVENT_LOG) log: EventLog,
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
    const key = foreignId === undefined ? undefined : `${request.feed}\n${foreignId}`;
    // A second add with the same foreignId while the first is on its way to disk gets the first.
    const inFlight = key === undefined ? undefined : this.addsInFlight.get(key);
    if (inFlight) return inFlight;
    const sameForeignId = foreignId === undefined ? undefined : await this.store.byForeignId(request.feed, foreignId);
    const [added] = decideActivity({ type: 'AddActivity', data: request }, sameForeignId);
    if (!added) return { activity: sameForeignId!, durable: Promise.resolve() };
    const { durable } = await this.writer.enqueue(streamOf(added), added);
    const pending = { activity: evolveActivity(undefined, added)!, durable };
    if (key !== undefined) {
      this.addsInFlight.set(key, pending);
      void durable
        .finally(() => {
          if (this.addsInFlight.get(key) === pending) this.addsInFlight.delete(key);
        })
        .catch(() => undefined);
    }
    return pending;
  }

  remove(request: RemoveActivityRequest): Promise<void> {
    return this.perFeed.run(request.feed, () =>
      this.writer.decideWithRetry(async () => {
        await this.decideOnExisting({ type: 'RemoveActivity', data: request });
      }),
    );
  }

  async get(request: GetActivitiesRequest): Promise<Activity[]> {
    await this.store.reach(request.atLeast);
    return this.store.get(request.ids);
  }

  /** Raises an activity for relevancy-ordered timelines; returns it as it now is. */
  bump(request: BumpActivityRequest): Promise<Activity> {
    return this.perFeed.run(request.feed, () =>
      this.writer.decideWithRetry(async () => (await this.decideOnExisting({ type: 'BumpActivity', data: request }))!),
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
    const items = await this.store.recent(request.feeds, request.before, request.limit + 1, request.atMost, request.order);
    const fits = request.maxBytes === undefined ? items.length : countWithin(items, request.maxBytes);
    if (items.length <= request.limit && fits === items.length) return { items, next: null };
    items.length = Math.min(request.limit, fits);
    return { items, next: keyOfOrder(request.order)(items[items.length - 1]!) };
  }
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
