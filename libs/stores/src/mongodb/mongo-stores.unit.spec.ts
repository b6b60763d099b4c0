import { MingoCollection } from '../contract/mingo-collection.js';
import { describeContentStoreContract } from '../contract/content-store.contract.js';
import { describeGraphStoreContract } from '../contract/graph-store.contract.js';
import { MongoContentStore } from './mongo-content-store.js';
import { MongoGraphStore } from './mongo-graph-store.js';
import type { ProjectionCollections } from './mongo-projection.js';
import type { ActivityDocument } from './projection-documents.js';
import { TimelineGenerations, type GenerationPointerDocument } from './timeline-generations.js';

const meta = (): ProjectionCollections => ({ positions: new MingoCollection(), revisions: new MingoCollection() });

describeContentStoreContract('mongodb documents on mingo', async () => new MongoContentStore(meta(), new MingoCollection()));
describeGraphStoreContract('mongodb documents on mingo', async () => new MongoGraphStore(meta(), new MingoCollection()));

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
