import { Logger } from '@nestjs/common';
import { MongoClient } from 'mongodb';
import type { FeedId } from '@feedmill/contracts';
import {
  MemoryContentStore,
  MemoryGraphStore,
  MemoryTimelineStore,
  MongoContentStore,
  MongoGraphStore,
  MongoTimelineStore,
  DriverCollection,
  timelineCollections,
  projectionCollections,
  type ContentStore,
  type GraphStore,
  type TimelinePolicy,
  type TimelineStore,
} from '@feedmill/stores';
import type { RuntimeConfig } from './config/runtime-config.js';

/** Makes the stores of the configured backend (`STORE`) for the services of this process. */
export interface StoreFactory {
  content(): Promise<ContentStore>;
  graph(): Promise<GraphStore>;
  /** A timeline store; a rebuild asks for a new `generation`, kept apart from the live one. */
  timeline(policyOf: (reader: FeedId) => TimelinePolicy, generation?: number): Promise<TimelineStore>;
  close(): Promise<void>;
}

export const STORE_FACTORY = Symbol('StoreFactory');

/** Memory stores: rebuilt from the log at every start. */
export const memoryStores: StoreFactory = {
  content: async () => new MemoryContentStore(),
  graph: async () => new MemoryGraphStore(),
  timeline: async (policyOf) => new MemoryTimelineStore(policyOf),
  close: async () => undefined,
};

export async function openStores(config: RuntimeConfig): Promise<StoreFactory> {
  if (config.STORE !== 'mongodb') return memoryStores;
  const client = await MongoClient.connect(config.MONGODB_URL!);
  const db = client.db(config.MONGODB_DB);
  new Logger('stores').log(`MongoDB stores in database ${config.MONGODB_DB}`);
  return {
    content: async () => new MongoContentStore(await projectionCollections(db), new DriverCollection(db.collection('activities'))),
    graph: async () => new MongoGraphStore(await projectionCollections(db), new DriverCollection(db.collection('follows'))),
    timeline: async (policyOf, generation = 0) => new MongoTimelineStore(await timelineCollections(db, generation === 0 ? '' : `g${generation}_`), policyOf),
    close: () => client.close(),
  };
}
