import { join } from 'node:path';
import { Logger } from '@nestjs/common';
import { MongoClient } from 'mongodb';
import { SealedEventLog, type EventLog } from '@feedmill/event-log';
import type { FeedId, TimelineModel } from '@feedmill/contracts';
import {
  MemoryContentStore,
  MemoryGraphStore,
  MemoryTimelineStore,
  MongoContentStore,
  MongoGraphStore,
  MongoTimelineStore,
  mongoTimelineModels,
  timelinePositionId,
  DriverCollection,
  timelineCollections,
  projectionCollections,
  TimelineGenerations,
  SnapshotKeeper,
  SnapshotStore,
  type Snapshottable,
  type SnapshotObserver,
  type ContentStore,
  type GraphStore,
  type TimelinePolicy,
  type TimelineStore,
} from '@feedmill/stores';
import type { RuntimeConfig } from '@feedmill/config';
import { metrics } from '@feedmill/observability';

export interface TimelineStoreOptions {
  /** A new generation for a rebuild, kept apart from the live one until {@link StoreFactory.activateTimeline}. @defaultValue the active one */
  generation?: number;
  /** Names the feed config the policies come from ({@link FeedGroups.fingerprint}). @defaultValue '' */
  policies?: string;
  /** Each timeline group's model, so that a backend refuses at start a model it does not keep. @defaultValue none checked */
  groupModels?: Readonly<Record<string, TimelineModel>>;
  /** The notification groups, so that a backend that keeps no seen and read marks refuses them at start. @defaultValue none checked */
  notificationGroups?: readonly string[];
  /**
   * The timeline partition the store holds, of how many: it keeps its own position (and its
   * own snapshots). @defaultValue partition 0 of 1, which keeps the names timelines had before partitions
   */
  partition?: { index: number; of: number };
}

/** The name a timeline partition's memory store (and its snapshots) go by. */
function memoryTimelineName(partition: TimelineStoreOptions['partition']): string {
  // The count is in the name: a partition's readers are another set under another count, so a
  // snapshot of partition 2 of 4 must not restore as partition 2 of 3.
  return partition === undefined || partition.of <= 1 ? 'timeline' : `timeline-p${partition.index}of${partition.of}`;
}

/** Makes the stores of the configured backend (`STORE`) for the services of this process. */
export interface StoreFactory {
  /**
   * Whether timelines live outside the process (MongoDB): then any timeline process serves
   * any partition, and none owns one.
   */
  readonly sharedTimelines: boolean;
  content(): Promise<ContentStore>;
  graph(): Promise<GraphStore>;
  /** A timeline store of the active generation, or of a new one for a rebuild. */
  timeline(policyOf: (reader: FeedId) => TimelinePolicy, options?: TimelineStoreOptions): Promise<TimelineStore>;
  /** Makes a rebuilt generation the one a restart opens. */
  activateTimeline(generation: number): Promise<void>;
  /**
   * Restores a memory state of a service from its snapshot, if the stores keep snapshots, and
   * keeps it saved from then on ({@link SnapshotKeeper.restoreAndKeep}); otherwise does
   * nothing. Call it before the state takes in any event.
   */
  restoreAndKeep(state: Snapshottable, options?: { atMost?: number }): Promise<void>;
  close(): Promise<void>;
}

export const STORE_FACTORY = Symbol('StoreFactory');

/** Memory stores: rebuilt from the log at every start. */
export const memoryStores: StoreFactory = {
  sharedTimelines: false,
  content: async () => new MemoryContentStore(),
  graph: async () => new MemoryGraphStore(),
  timeline: async (policyOf, options) => new MemoryTimelineStore(policyOf, undefined, options?.policies, memoryTimelineName(options?.partition)),
  // Memory timelines are rebuilt from the log at every start: nothing to remember.
  activateTimeline: async () => undefined,
  restoreAndKeep: async () => undefined,
  close: async () => undefined,
};

/**
 * Memory stores, and the services' own memory states, that start from their newest good
 * snapshot and replay only the log's tail, and write snapshots periodically and when the
 * stores close (at shutdown, after the services stopped applying).
 */
export function snapshottingMemoryStores(keeper: SnapshotKeeper, log: EventLog): StoreFactory {
  /** Rebuilt timeline stores (one per partition) by generation, until one is activated. */
  const rebuilt = new Map<number, MemoryTimelineStore[]>();
  const restored = async <T extends Snapshottable>(state: T): Promise<T> => {
    await keeper.restoreAndKeep(state, await log.headPosition());
    return state;
  };
  return {
    sharedTimelines: false,
    content: () => restored(new MemoryContentStore()),
    graph: () => restored(new MemoryGraphStore()),
    timeline: async (policyOf, { generation, policies, partition } = {}) => {
      const store = new MemoryTimelineStore(policyOf, undefined, policies, memoryTimelineName(partition));
      if (generation === undefined) return restored(store);
      rebuilt.set(generation, [...(rebuilt.get(generation) ?? []), store]);
      return store;
    },
    activateTimeline: async (generation) => {
      const stores = rebuilt.get(generation) ?? [];
      rebuilt.clear();
      for (const store of stores) await keeper.replace(store);
    },
    restoreAndKeep: async (state, options) => keeper.restoreAndKeep(state, await log.headPosition(), options),
    close: () => keeper.close(),
  };
}

/** Snapshots as `/metrics` shows them: how many were written, how long each took, and the position each state's newest covers. */
const snapshotMetrics: SnapshotObserver = {
  restored: (state, position) => metrics.snapshotPosition.labels(state).set(position),
  written: (state, position, seconds) => {
    metrics.snapshotsWritten.labels(state).inc();
    metrics.snapshotDuration.labels(state).observe(seconds);
    metrics.snapshotPosition.labels(state).set(position);
  },
};

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
    const keeper = new SnapshotKeeper(store, logger, { everyEvents: config.SNAPSHOT_EVERY_EVENTS, everyMs: config.SNAPSHOT_EVERY_SECONDS * 1000 }, snapshotMetrics);
    // Snapshots taken before an erasure hold what it erased: they are replaced and deleted.
    if (options.fileLog instanceof SealedEventLog) options.fileLog.onErased(({ position }) => keeper.afterErasure(position));
    return snapshottingMemoryStores(keeper, options.fileLog);
  }
  const client = await MongoClient.connect(config.MONGODB_URL!);
  const db = client.db(config.MONGODB_DB);
  const generations = new TimelineGenerations(new DriverCollection(db.collection('timeline_generations')));
  new Logger('stores').log(`MongoDB stores in database ${config.MONGODB_DB}`);
  return {
    sharedTimelines: true,
    content: async () => new MongoContentStore(await projectionCollections(db), new DriverCollection(db.collection('activities'))),
    graph: async () =>
      new MongoGraphStore(
        await projectionCollections(db),
        new DriverCollection(db.collection('follows')),
        new DriverCollection(db.collection('follow_requests')),
        new DriverCollection(db.collection('feed_settings')),
        new DriverCollection(db.collection('kept_follows')),
      ),
    timeline: async (policyOf, { generation, groupModels = {}, notificationGroups = [], partition } = {}) => {
      for (const group of notificationGroups) {
        throw new Error(`timeline group "${group}": MongoDB timelines keep no seen and read marks, so no notification feed ("notifications": true); use STORE=memory for it`);
      }
      for (const [group, model] of Object.entries(groupModels)) {
        if (!(mongoTimelineModels as readonly string[]).includes(model)) {
          throw new Error(`timeline group "${group}": MongoDB timelines keep the models ${mongoTimelineModels.join(', ')}, not ${model}; use STORE=memory or another model`);
        }
      }
      const prefix = TimelineGenerations.prefixOf(generation ?? (await generations.active()));
      return new MongoTimelineStore(await timelineCollections(db, prefix), policyOf, undefined, timelinePositionId(partition?.index ?? 0, partition?.of ?? 1));
    },
    activateTimeline: (generation) => generations.activate(generation),
    // MongoDB stores are durable themselves; the services' own memory states are rebuilt.
    restoreAndKeep: async () => undefined,
    close: () => client.close(),
  };
}
