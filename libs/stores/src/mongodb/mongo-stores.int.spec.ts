import { randomUUID } from 'node:crypto';
import { MongoClient } from 'mongodb';
import { describeContentStoreContract } from '../contract/content-store.contract.js';
import { describeGraphStoreContract } from '../contract/graph-store.contract.js';
import { describeTimelineStoreContract } from '../contract/timeline-store.contract.js';
import { DriverCollection, projectionCollections, timelineCollections } from './driver-collection.js';
import { MongoContentStore } from './mongo-content-store.js';
import { MongoGraphStore } from './mongo-graph-store.js';
import { MongoTimelineStore, mongoTimelineModels } from './mongo-timeline-store.js';

/**
 * The store contracts on a real MongoDB when MONGODB_URL is set. No MongoDB server can be
 * installed on every machine, so without it the suite says so and runs nothing; the same
 * documents run on mingo in the unit tier either way.
 */
const url = process.env['MONGODB_URL'];

if (url) {
  const client = new MongoClient(url);
  const db = client.db(`feedmill_test_${randomUUID().slice(0, 8)}`);
  let run = 0;
  afterAll(async () => {
    await db.dropDatabase();
    await client.close();
  });
  describeContentStoreContract('mongodb', async () => {
    const prefix = `t${++run}_`;
    return new MongoContentStore(await projectionCollections(db, prefix), new DriverCollection(db.collection(`${prefix}activities`)));
  });
  describeGraphStoreContract('mongodb', async () => {
    const prefix = `t${++run}_`;
    const collection = (name: string) => new DriverCollection<never>(db.collection(prefix + name));
    return new MongoGraphStore(await projectionCollections(db, prefix), collection('follows'), collection('follow_requests'), collection('feed_settings'), collection('kept_follows'));
  });
  describeTimelineStoreContract('mongodb', async (policyOf, now) => new MongoTimelineStore(await timelineCollections(db, `t${++run}_`), policyOf, now), mongoTimelineModels);
} else {
  console.log('SKIPPED: store contracts on MongoDB: MONGODB_URL is not set (no MongoDB server runs here; the same documents run on mingo in the unit tier)');
  it.todo('store contracts on MongoDB (set MONGODB_URL to run them)');
}
