export { TimelineModule } from './timeline.module.js';
export { TimelineService } from './timeline.service.js';
export { READER_RETRY_POLICY, defaultReaderRetryPolicy } from './reader-isolation/reader-isolation.js';
export type { ReaderRetryPolicy } from './reader-isolation/reader-isolation.js';
export { FixedPartitions, PARTITION_OWNERSHIP } from './partition-ownership.js';
export type { PartitionOwnership, PartitionHandlers } from './partition-ownership.js';
export { LeasedPartitions } from './leased-partitions.js';
export type { Lease, LeaseBoard, LeasedPartitionsOptions } from './leased-partitions.js';
