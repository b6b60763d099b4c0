import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { loadRuntimeConfig, type RuntimeConfig } from '@feedmill/config';
import { staticPartitionsOf } from '@feedmill/contracts';
import { connectTimelinePartitionLeases } from '@feedmill/fanout-cluster';
import { runMain, runNatsService } from '@feedmill/runtime';
import { FixedPartitions, LeasedPartitions, TimelineModule, TimelineService, type PartitionOwnership } from '@feedmill/timeline-service';

/**
 * Which partitions this process owns: its share by its place when it has one
 * (`TIMELINE_REPLICA_INDEX`), else whatever leases it claims when several processes share
 * them; alone, or with MongoDB timelines (which any process serves), all of them.
 */
async function ownership(config: RuntimeConfig): Promise<PartitionOwnership | undefined> {
  if (config.TIMELINE_PARTITIONS === 1 || config.STORE === 'mongodb') return undefined;
  if (config.TIMELINE_REPLICA_INDEX !== undefined) {
    return new FixedPartitions(staticPartitionsOf(config.TIMELINE_PARTITIONS, config.TIMELINE_REPLICAS, config.TIMELINE_REPLICA_INDEX));
  }
  if (config.TIMELINE_REPLICAS === 1) return undefined;
  const logger = new Logger('timeline-partitions');
  const leases = await connectTimelinePartitionLeases({ servers: config.NATS_URL, logStream: config.JETSTREAM_STREAM, leaseMs: config.TIMELINE_PARTITION_LEASE_MS });
  return new LeasedPartitions(leases.board, {
    partitions: config.TIMELINE_PARTITIONS,
    replicas: config.TIMELINE_REPLICAS,
    leaseMs: config.TIMELINE_PARTITION_LEASE_MS,
    warn: (message) => logger.warn(message),
    closed: () => leases.close(),
  });
}

runMain(async () => {
  const owned = await ownership(loadRuntimeConfig());
  await runNatsService({ name: 'timeline', feature: owned ? TimelineModule.owning(owned) : TimelineModule, usesLog: true, callsServices: true, status: TimelineService, publishesStreams: true });
});
