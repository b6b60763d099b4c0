import type { EdgeBound, FeedEvent, FeedId } from '@feedmill/contracts';
import { graphEventTypes, graphPartlyReadEventTypes, isFollowEdgeEvent, type EdgeState } from '@feedmill/feed-models';
import type { GraphStore } from '../ports.js';
import type { DocumentCollection } from './document-collection.js';
import { bulkUpdateAll, MongoProjection, type ProjectionCollections } from './mongo-projection.js';
import { edgeDocuments, settingsDocuments, type EdgeDocument, type SettingsDocument } from './projection-documents.js';

/**
 * Follow edges in MongoDB, one document each, paged by index both ways; follow requests as
 * edge documents of their own collection; feeds' settings one document each.
 */
export class MongoGraphStore extends MongoProjection implements GraphStore {
  readonly name = 'graph';
  protected readonly eventTypes = graphEventTypes;
  protected override readonly partlyReadTypes = graphPartlyReadEventTypes;

  constructor(
    meta: ProjectionCollections,
    private readonly edges: DocumentCollection<EdgeDocument>,
    private readonly requested: DocumentCollection<EdgeDocument>,
    private readonly settings: DocumentCollection<SettingsDocument>,
    /** Kept edges: feeds unfollowed with their history kept. */
    private readonly kept: DocumentCollection<EdgeDocument>,
  ) {
    super(meta);
  }

  /**
   * Keeps or drops the edge document as `evolveFollowEdge` leaves it, with its bound. A
   * follow's writes are idempotent whatever the edge was: no read first. An unfollow that
   * keeps the history reads the live edge for its bound; applied again after a crash between
   * its writes, it finds no live edge and leaves the kept one it wrote.
   */
  protected async evolve(event: FeedEvent, position: number): Promise<void> {
    switch (event.type) {
      case 'FollowRequested':
        await this.requested.replaceOne(edgeDocuments.followed(event.data.follower, event.data.target, position));
        return;
      case 'FollowRequestRejected':
        await this.requested.deleteMany({ _id: edgeDocuments.id(event.data.follower, event.data.target) });
        return;
      case 'FeedSettingsChanged':
        await this.settings.replaceOne(settingsDocuments.set(event.data.feed, event.data.private, position));
        return;
      case 'FeedErased': {
        const erased = edgeDocuments.erased(event.data.feed, position);
        for (const edges of [this.edges, this.kept, this.requested]) await edges.deleteMany(erased);
        await this.settings.deleteMany(settingsDocuments.erased(event.data.feed, position));
        return;
      }
    }
    if (!isFollowEdgeEvent(event)) return;
    const { follower, target } = event.data;
    const id = edgeDocuments.id(follower, target);
    if (event.type === 'FeedFollowed') {
      const { since } = event.data;
      await this.edges.replaceOne(edgeDocuments.followed(follower, target, position, since === undefined ? undefined : { since, followedAt: position }));
      // A follow replaces a kept edge; an approved request is a follow, no longer waiting.
      await this.kept.deleteMany({ _id: id });
      await this.requested.deleteMany({ _id: id });
      return;
    }
    if (event.data.keepHistory) {
      const live = await this.edges.findOne({ _id: id });
      if (live) await this.kept.replaceOne(edgeDocuments.kept(live, position));
    } else {
      await this.kept.deleteMany({ _id: id });
    }
    await this.edges.deleteMany({ _id: id });
  }

  /** A batch of follows (distinct edges) in one round trip; anything else one at a time. */
  protected override async evolveItems(items: readonly FeedEvent[], position: number): Promise<void> {
    if (!items.every((item) => item.type === 'FeedFollowed')) return super.evolveItems(items, position);
    await bulkUpdateAll(
      this.edges,
      items.map((item) => edgeDocuments.followedAsUpdate(item.data.follower, item.data.target, position)),
    );
    // Requests the import's follows answer (an admin importing approved follows) wait no more; kept edges are replaced.
    const ids = items.map((item) => edgeDocuments.id(item.data.follower, item.data.target));
    await this.requested.deleteMany({ _id: { $in: ids } });
    await this.kept.deleteMany({ _id: { $in: ids } });
  }

  async boundsOf(follower: FeedId): Promise<EdgeBound[]> {
    const [live, kept] = await Promise.all([this.edges.find(edgeDocuments.boundedOf(follower, false)), this.kept.find(edgeDocuments.boundedOf(follower, true))]);
    return [...live, ...kept].map(edgeDocuments.boundOf);
  }

  async isFollowing(follower: FeedId, target: FeedId): Promise<boolean> {
    return (await this.edges.findOne({ _id: edgeDocuments.id(follower, target) })) !== null;
  }

  /** One query for all of them. */
  async followingEach(edges: ReadonlyArray<readonly [FeedId, FeedId]>): Promise<boolean[]> {
    const ids = edges.map(([follower, target]) => edgeDocuments.id(follower, target));
    const found = new Set((await this.edges.find(edgeDocuments.among(ids))).map((d) => d._id));
    return ids.map((id) => found.has(id));
  }

  async followers(feed: FeedId, after: FeedId | undefined, limit: number): Promise<FeedId[]> {
    return (await this.edges.find(edgeDocuments.followers(feed, after, limit))).map((d) => d.f);
  }

  async following(feed: FeedId, after: FeedId | undefined, limit: number): Promise<FeedId[]> {
    return (await this.edges.find(edgeDocuments.following(feed, after, limit))).map((d) => d.t);
  }

  async keptBy(target: FeedId): Promise<FeedId[]> {
    return (await this.kept.find(edgeDocuments.keptOf(target))).map((d) => d.f);
  }

  async keptEdges(): Promise<Array<{ follower: FeedId; target: FeedId }>> {
    return (await this.kept.find(edgeDocuments.allKept())).map((d) => ({ follower: d.f, target: d.t }));
  }

  async edgeState(follower: FeedId, target: FeedId): Promise<EdgeState> {
    if (await this.isFollowing(follower, target)) return 'following';
    return (await this.requested.findOne({ _id: edgeDocuments.id(follower, target) })) ? 'requested' : 'none';
  }

  async requests(feed: FeedId, after: FeedId | undefined, limit: number): Promise<FeedId[]> {
    return (await this.requested.find(edgeDocuments.followers(feed, after, limit))).map((d) => d.f);
  }

  async isPrivate(feed: FeedId): Promise<boolean> {
    return (await this.settings.findOne({ _id: feed }))?.private === true;
  }

  async counts(feed: FeedId): Promise<{ followers: number; following: number }> {
    const [followers, following] = await Promise.all([this.edges.count({ t: feed }), this.edges.count({ f: feed })]);
    return { followers, following };
  }
}
