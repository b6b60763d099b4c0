import { upcastEvent, type Activity, type FeedId, type SortKey } from '@feedmill/contracts';
import type { RecordedEvent } from '@feedmill/event-log';
import type { ContentStore } from '../ports.js';
import type { DocumentCollection } from './document-collection.js';
import { MongoProjection, type ProjectionCollections } from './mongo-projection.js';
import { activityDocuments, type ActivityDocument } from './projection-documents.js';

/** Activities in MongoDB, one document each. */
export class MongoContentStore extends MongoProjection implements ContentStore {
  readonly name = 'content';
  protected readonly eventTypes = new Set(['ActivityAdded', 'ActivityRemoved', 'ActivityBumped']);

  constructor(
    meta: ProjectionCollections,
    private readonly activities: DocumentCollection<ActivityDocument>,
  ) {
    super(meta);
  }

  protected async evolve(recorded: RecordedEvent): Promise<void> {
    const event = upcastEvent(recorded.type, recorded.data, recorded.metadata['v'] as number | undefined);
    if (event?.type === 'ActivityAdded') await this.activities.replaceOne(activityDocuments.added(event.data.activity, recorded.position));
    else if (event?.type === 'ActivityRemoved') await this.activities.deleteMany(activityDocuments.removed(event.data.id));
    else if (event?.type === 'ActivityBumped') {
      const current = (await this.activities.findOne({ _id: event.data.id }))?.a;
      if (current) await this.activities.updateOne(activityDocuments.bumped(current, event.data.time));
    }
  }

  async get(ids: readonly string[]): Promise<Activity[]> {
    if (ids.length === 0) return [];
    const found = new Map((await this.activities.find(activityDocuments.byIds(ids))).map((d) => [d._id, d.a]));
    return ids.flatMap((id) => (found.has(id) ? [found.get(id)!] : []));
  }

  async byForeignId(feed: FeedId, foreignId: string): Promise<Activity | undefined> {
    return (await this.activities.findOne(activityDocuments.byForeignId(feed, foreignId)))?.a;
  }

  async recent(feeds: readonly FeedId[], before: SortKey | undefined, limit: number, atMost?: number, order?: 'time' | 'relevance'): Promise<Activity[]> {
    if (feeds.length === 0) return [];
    return (await this.activities.find(activityDocuments.recent(feeds, before, limit, atMost, order))).map((d) => d.a);
  }
}
