import type { Activity, EdgeBound, FeedEvent, FeedId, SortKey } from '@feedmill/contracts';
import { activityIdOf, activityEventTypes, evolveActivity, isActivityEvent } from '@feedmill/feed-models';
import type { ContentStore } from '../ports.js';
import type { DocumentCollection } from './document-collection.js';
import { bulkUpdateAll, MongoProjection, type ProjectionCollections } from './mongo-projection.js';
import { activityDocuments, type ActivityDocument } from './projection-documents.js';

/** Activities in MongoDB, one document each. */
export class MongoContentStore extends MongoProjection implements ContentStore {
  readonly name = 'content';
  protected readonly eventTypes = activityEventTypes;

  constructor(
    meta: ProjectionCollections,
    private readonly activities: DocumentCollection<ActivityDocument>,
  ) {
    super(meta);
  }

  /**
   * Writes the activity document as {@link evolveActivity} leaves it: an add replaces it
   * whole (idempotent), a removal deletes it, and a change to a held activity (a bump, an
   * update) sets the activity and its relevance key, keeping the position it was added at.
   */
  protected async evolve(event: FeedEvent, position: number): Promise<void> {
    if (event.type === 'FeedErased') {
      await this.activities.deleteMany(activityDocuments.erased(event.data.feed, position));
      await this.activities.updateMany(activityDocuments.addressedOnlyTo(event.data.feed, position));
      await this.activities.updateMany(activityDocuments.unaddressed(event.data.feed, position));
      return;
    }
    if (!isActivityEvent(event)) return;
    const id = activityIdOf(event);
    if (event.type === 'ActivityAdded') {
      await this.activities.replaceOne(activityDocuments.added(evolveActivity(undefined, event)!, position));
      return;
    }
    const before = event.type === 'ActivityRemoved' ? undefined : (await this.activities.findOne({ _id: id }))?.a;
    const after = evolveActivity(before, event);
    if (!after) await this.activities.deleteMany(activityDocuments.removed(id));
    else await this.activities.updateOne(activityDocuments.changed(after));
  }

  /** A batch of adds (distinct activities) in one round trip; anything else one at a time. */
  protected override async evolveItems(items: readonly FeedEvent[], position: number): Promise<void> {
    if (!items.every((item) => item.type === 'ActivityAdded')) return super.evolveItems(items, position);
    await bulkUpdateAll(
      this.activities,
      items.map((item) => activityDocuments.addedAsUpdate(evolveActivity(undefined, item)!, position)),
    );
  }

  async get(ids: readonly string[]): Promise<Activity[]> {
    if (ids.length === 0) return [];
    const found = new Map((await this.activities.find(activityDocuments.byIds(ids))).map((d) => [d._id, d.a]));
    return ids.flatMap((id) => (found.has(id) ? [found.get(id)!] : []));
  }

  async positionsOf(ids: readonly string[]): Promise<Array<number | null>> {
    if (ids.length === 0) return [];
    const found = new Map((await this.activities.find(activityDocuments.byIds(ids))).map((d) => [d._id, d.p]));
    return ids.map((id) => found.get(id) ?? null);
  }

  async byForeignId(feed: FeedId, foreignId: string): Promise<Activity | undefined> {
    return (await this.activities.findOne(activityDocuments.byForeignId(feed, foreignId)))?.a;
  }

  async recent(feeds: readonly FeedId[], before: SortKey | undefined, limit: number, atMost?: number, order?: 'time' | 'relevance', bounds?: readonly EdgeBound[]): Promise<Activity[]> {
    if (feeds.length === 0) return [];
    return (await this.activities.find(activityDocuments.recent(feeds, before, limit, atMost, order, bounds))).map((d) => d.a);
  }

  async slice(ref: string, before: SortKey | undefined, limit: number): Promise<Activity[]> {
    return (await this.activities.find(activityDocuments.slice(ref, before, limit))).map((d) => d.a);
  }
}
