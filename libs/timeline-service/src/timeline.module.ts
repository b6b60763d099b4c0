import { Module, type DynamicModule, type Provider } from '@nestjs/common';
import { TimelineMessageController } from './timeline.message.controller.js';
import { TimelineService } from './timeline.service.js';
import { PARTITION_OWNERSHIP, type PartitionOwnership } from './partition-ownership.js';
import { READER_RETRY_POLICY, type ReaderRetryPolicy } from './reader-isolation/reader-isolation.js';
import { TIMELINE_REPLICAS, type TimelineReplicas } from './replicas/timeline-replicas.js';

/** What a timeline process may be given beside its defaults. */
export interface TimelineModuleOptions {
  /**
   * Which partitions this process owns (memory stores in a cluster of several timeline
   * processes). @defaultValue every partition
   */
  ownership?: PartitionOwnership;
  /** The retry policy for a reader's failing deliveries (tests shorten it). @defaultValue timeline's own */
  readerRetry?: ReaderRetryPolicy;
  /** Copies of the timelines that HTTP workers hold, kept by this process (one partition, memory stores). */
  replicas?: TimelineReplicas;
}

@Module({
  controllers: [TimelineMessageController],
  providers: [TimelineService],
})
export class TimelineModule {
  /** Timeline with the options given: one module, whichever of them are set. */
  static configured(options: TimelineModuleOptions): DynamicModule {
    const providers: Provider[] = [];
    if (options.ownership) providers.push({ provide: PARTITION_OWNERSHIP, useValue: options.ownership });
    if (options.readerRetry) providers.push({ provide: READER_RETRY_POLICY, useValue: options.readerRetry });
    if (options.replicas) providers.push({ provide: TIMELINE_REPLICAS, useValue: options.replicas });
    return { module: TimelineModule, providers };
  }

  /** Timelines whose partitions this process owns as `ownership` says. */
  static owning(ownership: PartitionOwnership): DynamicModule {
    return TimelineModule.configured({ ownership });
  }

  /** Timeline with its own retry policy for a reader's failing deliveries (tests shorten it). */
  static withReaderRetryPolicy(retry: ReaderRetryPolicy): DynamicModule {
    return TimelineModule.configured({ readerRetry: retry });
  }
}
