import { activitiesImportStream, activityStream, followsImportStream, followStream, type FeedId } from '@feedmill/contracts';
import { MingoCollection } from '../contract/mingo-collection.js';
import { activityAt, recordEvents } from '../contract/recorded.js';
import type { StoredDocument } from './document-collection.js';
import { describeContentStoreContract } from '../contract/content-store.contract.js';
import { describeGraphStoreContract } from '../contract/graph-store.contract.js';
import { MongoContentStore } from './mongo-content-store.js';
import { MongoGraphStore } from './mongo-graph-store.js';
import type { ProjectionCollections } from './mongo-projection.js';
import type { ActivityDocument, EdgeDocument } from './projection-documents.js';
import { TimelineGenerations, type GenerationPointerDocument } from './timeline-generations.js';

const meta = (): ProjectionCollections => ({ positions: new MingoCollection(), revisions: new MingoCollection() });

describeContentStoreContract('mongodb documents on mingo', async () => new MongoContentStore(meta(), new MingoCollection()));
describeGraphStoreContract('mongodb documents on mingo', async () => new MongoGraphStore(meta(), new MingoCollection(), new MingoCollection(), new MingoCollection(), new MingoCollection()));

it('keeps its position and revisions in its documents, so that a restarted store resumes', async () => {
  const shared = meta();
  const activities = new MingoCollection<ActivityDocument>();
  const first = new MongoContentStore(shared, activities);
  const event = {
    stream: 'feed-user:a',
    revision: 0,
    position: 7,
    type: 'ActivityAdded',
    data: { activity: { id: 'a1', feed: 'user:a', actor: 'a', verb: 'post', object: 'o', time: '2026-01-01T00:00:00.000Z' } },
    metadata: { v: 1 },
    recordedAt: 't',
  };
  await first.apply([event]);
  const restarted = new MongoContentStore(shared, activities);
  expect(await restarted.position()).toBe(7);
  expect(await restarted.streamRevision('feed-user:a')).toBe(0);
  await restarted.apply([event]);
  expect(activities.documents).toHaveLength(1);
});

/** A mingo collection that counts its round trips of writes. */
class CountingCollection<T extends StoredDocument> extends MingoCollection<T> {
  bulkWrites = 0;
  singleWrites = 0;
  override async bulkUpdate(...args: Parameters<MingoCollection<T>['bulkUpdate']>) {
    this.bulkWrites++;
    return super.bulkUpdate(...args);
  }
  override async replaceOne(...args: Parameters<MingoCollection<T>['replaceOne']>) {
    this.singleWrites++;
    return super.replaceOne(...args);
  }
}

describe('batches in MongoDB documents', () => {
  const sansPosition = (documents: ActivityDocument[]) => documents.map(({ p: _p, ...rest }) => rest).sort((a, b) => (a._id < b._id ? -1 : 1));

  it('writes a batch of adds in one bulk write, the same documents single adds write', async () => {
    const activities = [activityAt('i1', 'user:a', 1, { foreignId: 'f' }), activityAt('i2', 'user:b', 2, { extra: { n: 1 } })];
    const batched = new CountingCollection<ActivityDocument>();
    await new MongoContentStore(meta(), batched).apply(recordEvents([[activitiesImportStream('b'), { type: 'ActivitiesAdded', data: { id: 'b', activities } }]]));
    const single = new MingoCollection<ActivityDocument>();
    await new MongoContentStore(meta(), single).apply(recordEvents(activities.map((activity) => [activityStream(activity.feed), { type: 'ActivityAdded', data: { activity } }])));
    expect({ bulk: batched.bulkWrites, single: batched.singleWrites }).toEqual({ bulk: 1, single: 0 });
    expect(sansPosition(batched.documents)).toEqual(sansPosition(single.documents));
    expect(batched.documents.map((d) => d.p)).toEqual([1, 1]);
  });

  it('writes a batch of follows in one bulk write, the same edges single follows write, and again changes nothing', async () => {
    const follows: Array<[FeedId, FeedId]> = [['timeline:r', 'user:a'], ['timeline:s', 'user:a']];
    const edges = new CountingCollection<EdgeDocument>();
    const shared = meta();
    const batch = recordEvents([[followsImportStream('b'), { type: 'FeedsFollowed', data: { id: 'b', time: 't', follows } }]]);
    await new MongoGraphStore(shared, edges, new MingoCollection(), new MingoCollection(), new MingoCollection()).apply(batch);
    // A restarted store that lost its claim replays the batch: the edges stay as they are.
    await shared.revisions.deleteMany({});
    await new MongoGraphStore(shared, edges, new MingoCollection(), new MingoCollection(), new MingoCollection()).apply(batch);
    const single = new MingoCollection<EdgeDocument>();
    await new MongoGraphStore(meta(), single, new MingoCollection(), new MingoCollection(), new MingoCollection()).apply(recordEvents(follows.map(([follower, target]) => [followStream(follower), { type: 'FeedFollowed', data: { follower, target, time: 't' } }])));
    expect(edges.bulkWrites).toBe(2);
    // Each edge names the position of the event that wrote it: the batch's, or each single follow's.
    const sansWritten = (documents: EdgeDocument[]) => documents.map(({ w: _written, ...rest }) => rest);
    expect(sansWritten(edges.documents)).toEqual(sansWritten(single.documents));
    expect(edges.documents.map((d) => d.w)).toEqual([1, 1]);
    expect(single.documents.map((d) => d.w)).toEqual([1, 2]);
  });
});

describe('TimelineGenerations', () => {
  it('starts at the first generation, and a restart opens the one a rebuild activated', async () => {
    const pointers = new MingoCollection<GenerationPointerDocument>();
    expect(await new TimelineGenerations(pointers).active()).toBe(0);
    await new TimelineGenerations(pointers).activate(1763712000000);
    expect(await new TimelineGenerations(pointers).active()).toBe(1763712000000);
    expect(TimelineGenerations.prefixOf(0)).toBe('');
    expect(TimelineGenerations.prefixOf(7)).toBe('g7_');
  });
});
