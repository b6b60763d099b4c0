import { upcastEvent, type FeedId } from '@feedmill/contracts';
import type { RecordedEvent } from '@feedmill/event-log';
import type { GraphStore } from '../ports.js';
import type { DocumentCollection } from './document-collection.js';
import { MongoProjection, type ProjectionCollections } from './mongo-projection.js';
import { edgeDocuments, type EdgeDocument } from './projection-documents.js';

/** Follow edges in MongoDB, one document each, paged by index both ways. */
export class MongoGraphStore extends MongoProjection implements GraphStore {
  readonly name = 'graph';
  protected readonly eventTypes = new Set(['FeedFollowed', 'FeedUnfollowed']);

  constructor(
    meta: ProjectionCollections,
    private readonly edges: DocumentCollection<EdgeDocument>,
  ) {
    super(meta);
  }

  protected async evolve(recorded: RecordedEvent): Promise<void> {
    const event = upcastEvent(recorded.type, recorded.data, recorded.metadata['v'] as number | undefined);
    if (event?.type === 'FeedFollowed') await this.edges.replaceOne(edgeDocuments.followed(event.data.follower, event.data.target));
    else if (event?.type === 'FeedUnfollowed') await this.edges.deleteMany({ _id: edgeDocuments.id(event.data.follower, event.data.target) });
  }

  async isFollowing(follower: FeedId, target: FeedId): Promise<boolean> {
    return (await this.edges.findOne({ _id: edgeDocuments.id(follower, target) })) !== null;
  }

  async followers(feed: FeedId, after: FeedId | undefined, limit: number): Promise<FeedId[]> {
    return (await this.edges.find(edgeDocuments.followers(feed, after, limit))).map((d) => d.f);
  }

  async following(feed: FeedId, after: FeedId | undefined, limit: number): Promise<FeedId[]> {
    return (await this.edges.find(edgeDocuments.following(feed, after, limit))).map((d) => d.t);
  }

  async counts(feed: FeedId): Promise<{ followers: number; following: number }> {
    const [followers, following] = await Promise.all([this.edges.count({ t: feed }), this.edges.count({ f: feed })]);
    return { followers, following };
  }
}
