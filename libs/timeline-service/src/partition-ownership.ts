/** What a process does with a partition it comes to own, or stops owning. */
export interface PartitionHandlers {
  take(partition: number): Promise<void>;
  release(partition: number): Promise<void>;
}

/**
 * Which timeline partitions this process owns, over time: memory timelines live in the
 * process that owns their partition, which alone answers its deliveries and reads.
 */
export interface PartitionOwnership {
  /** Calls `take` for each partition this process comes to own, and `release` for each it loses. */
  start(handlers: PartitionHandlers): void;
  /** Lets every partition go (others take them over); resolves once released. */
  stop(): Promise<void>;
}

export const PARTITION_OWNERSHIP = Symbol('PartitionOwnership');

/**
 * A fixed set of partitions, owned from start to stop: every partition of a single timeline
 * process, every partition of a stateless one (MongoDB timelines), or a replica's share by
 * its index (`TIMELINE_REPLICA_INDEX`).
 */
export class FixedPartitions implements PartitionOwnership {
  constructor(readonly partitions: readonly number[]) {}

  start(handlers: PartitionHandlers): void {
    // One that cannot be taken (the handler says why) is left without an owner; the others are taken all the same.
    void (async () => {
      for (const partition of this.partitions) await handlers.take(partition).catch(() => undefined);
    })();
  }

  async stop(): Promise<void> {}
}
