import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import { MongoClient } from 'mongodb';
import type { EventLog } from '@feedmill/event-log';
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
  TimelineGenerations,
  SnapshotKeeper,
  SnapshotStore,
  type ContentStore,
  type GraphStore,
  type TimelinePolicy,
  type TimelineStore,
} from '@feedmill/stores';
import type { RuntimeConfig } from '@feedmill/config';

/** Makes the stores of the configured backend (`STORE`) for the services of this process. */
export interface StoreFactory {
  content(): Promise<ContentStore>;
  graph(): Promise<GraphStore>;
  /**
   * A timeline store: the active generation, or a new `generation` for a rebuild, kept apart
   * from the live one until {@link activateTimeline}.
   */
  timeline(policyOf: (reader: FeedId) => TimelinePolicy, generation?: number): Promise<TimelineStore>;
  /** Makes a rebuilt generation the one a restart opens. */
  activateTimeline(generation: number): Promise<void>;
  close(): Promise<void>;
}

export const STORE_FACTORY = Symbol('StoreFactory');

/** Memory stores: rebuilt from the log at every start. */
export const memoryStores: StoreFactory = {
  content: async () => new MemoryContentStore(),
  graph: async () => new MemoryGraphStore(),
  timeline: async (policyOf) => new MemoryTimelineStore(policyOf),
  // Memory timelines are rebuilt from the log at every start: nothing to remember.
  activateTimeline: async () => undefined,
  close: async () => undefined,
};

/**
 * Memory stores that start from their newest good snapshot and replay only the log's tail,
 * and write snapshots periodically and when the stores close (at shutdown, after the
 * services stopped applying).
 */
export function snapshottingMemoryStores(keeper: SnapshotKeeper, log: EventLog): StoreFactory {
  return {
    ...memoryStores,
    content: async () => {
      const store = new MemoryContentStore();
      await keeper.restoreAndKeep(store, await log.headPosition());
      return store;
    },
    graph: async () => {
      const store = new MemoryGraphStore();
      await keeper.restoreAndKeep(store, await log.headPosition());
      return store;
    },
    close: () => keeper.close(),
  };
}

export interface OpenStoresOptions {
  /**
   * The process's file log, when its memory stores may keep snapshots of it (`SNAPSHOTS`).
   * Other logs have their own consumers' state; MongoDB stores are durable themselves.
   */
  fileLog?: EventLog;
}

export async function openStores(config: RuntimeConfig, options: OpenStoresOptions = {}): Promise<StoreFactory> {
  if (config.STORE !== 'mongodb') {
    if (!options.fileLog || config.SNAPSHOTS === 'off') return memoryStores;
    const logger = new Logger('snapshots');
    const store = new SnapshotStore(join(config.FEEDMILL_DATA_DIR, 'snapshots'), logger);
    return snapshottingMemoryStores(
      new SnapshotKeeper(store, logger, { everyEvents: config.SNAPSHOT_EVERY_EVENTS, everyMs: config.SNAPSHOT_EVERY_SECONDS * 1000 }),
      options.fileLog,
    );
  }
  const client = await MongoClient.connect(config.MONGODB_URL!);
  const db = client.db(config.MONGODB_DB);
  const generations = new TimelineGenerations(new DriverCollection(db.collection('timeline_generations')));
  new Logger('stores').log(`MongoDB stores in database ${config.MONGODB_DB}`);
  return {
    content: async () => new MongoContentStore(await projectionCollections(db), new DriverCollection(db.collection('activities'))),
    graph: async () => new MongoGraphStore(await projectionCollections(db), new DriverCollection(db.collection('follows'))),
    timeline: async (policyOf, generation) => {
      const prefix = TimelineGenerations.prefixOf(generation ?? (await generations.active()));
      return new MongoTimelineStore(await timelineCollections(db, prefix), policyOf);
    },
    activateTimeline: (generation) => generations.activate(generation),
    close: () => client.close(),
  };
}
