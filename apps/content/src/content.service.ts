import { Inject, Injectable } from '@nestjs/common';
import {
  sortKeyOf,
  type Activity,
  type ActivityPage,
  type AddActivityRequest,
  type RecentActivitiesRequest,
  type RemoveActivityRequest,
} from '@feedmill/contracts';
import { EVENT_LOG, type EventLog } from '@feedmill/event-log';
import { decideAddActivity, decideRemoveActivity } from '@feedmill/feed-models';
import { SerialQueues } from '@feedmill/platform';
import { ProjectedService } from '@feedmill/projections';
import { CONTENT_STORE, type ContentStore } from '@feedmill/stores';

/** Activities: decides and appends adds and removes, and answers queries from its projection. */
@Injectable()
export class ContentService extends ProjectedService {
  /** Commands on one feed run one after another, so each decides on the state the last one left. */
  private readonly perFeed = new SerialQueues();

  constructor(
    @Inject(EVENT_LOG) log: EventLog,
    @Inject(CONTENT_STORE) private readonly store: ContentStore,
  ) {
    super(log, store);
  }

  add(request: AddActivityRequest): Promise<Activity> {
    return this.perFeed.run(request.feed, () =>
      this.writer.decideWithRetry(async () => {
        const { foreignId } = request.activity;
        const sameForeignId = foreignId === undefined ? undefined : await this.store.byForeignId(request.feed, foreignId);
        const decision = decideAddActivity(request, sameForeignId);
        if (decision.kind === 'added') await this.writer.append(decision.stream, decision.event);
        return decision.activity;
      }),
    );
  }

  remove(request: RemoveActivityRequest): Promise<void> {
    return this.perFeed.run(request.feed, () =>
      this.writer.decideWithRetry(async () => {
        const [existing] = await this.store.get([request.id]);
        const { stream, event } = decideRemoveActivity(request, existing);
        await this.writer.append(stream, event);
      }),
    );
  }

  get(ids: readonly string[]): Promise<Activity[]> {
    return this.store.get(ids);
  }

  async recent(request: RecentActivitiesRequest): Promise<ActivityPage> {
    await this.store.reach(request.atLeast);
    const items = await this.store.recent(request.feeds, request.before, request.limit + 1, request.atMost);
    if (items.length <= request.limit) return { items, next: null };
    items.length = request.limit;
    return { items, next: sortKeyOf(items[items.length - 1]!) };
  }
}
