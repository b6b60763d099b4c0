import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { PartitionHandlers, PartitionOwnership } from './partition-ownership.js';

/**
 * A lease that runs out unless renewed (a JetStream KV key with a time to live, in a cluster).
 * Its operations run one at a time, in the order called: a release waits for a renewal under way.
 */
export interface Lease {
  readonly key: string;
  readonly held: boolean;
  /** Takes it if nobody holds it. */
  take(value: string): Promise<boolean>;
  /** Renews it; `lost` once another process has it, or it may have run out; `why` is `not held` when it was given up before. */
  renew(value: string): Promise<{ lost: boolean; why?: string }>;
  /** Gives it up at once. */
  release(): Promise<void>;
}

/** Leases by key, all with the same time, and which keys somebody holds. */
export interface LeaseBoard {
  lease(key: string): Lease;
  held(): Promise<string[]>;
}

export interface LeasedPartitionsOptions {
  /** How many partitions there are (`TIMELINE_PARTITIONS`). */
  partitions: number;
  /** How many timeline processes share them (`TIMELINE_REPLICAS`): each claims up to its share, ceil(partitions / replicas). */
  replicas: number;
  /** How long a lease lasts unless renewed; renewed three times per lease time. */
  leaseMs: number;
  warn: (message: string) => void;
  /** Called once every lease is given up (closes the board's connection). @defaultValue nothing */
  closed?: () => Promise<void>;
}

const partitionKey = (partition: number) => `p${partition}`;
const WANTING = 'want-';

/**
 * Partitions claimed by leases (one per partition, on a {@link LeaseBoard}), for timeline
 * processes that have no fixed place, such as the pods of a Kubernetes Deployment.
 *
 * Each process claims free partitions up to its share, ceil(partitions / replicas), and keeps
 * them by renewing their leases. A partition free for a whole lease time (its owner died and
 * its lease ran out, or too few processes run) is taken by any process, past its share: no
 * partition stays without an owner while one process runs. A process below its share that
 * finds nothing free says so with a lease of its own (`want-<id>`); a process holding more
 * than its share then lets one partition go per turn, which the wanting one takes. Fan-out
 * brings each partition a process takes up by replaying the log into it.
 */
export class LeasedPartitions implements PartitionOwnership {
  private readonly id = randomUUID();
  private readonly leases: Lease[];
  private readonly wanting: Lease;
  private readonly share: number;
  /** Since when each partition was seen free; a partition free for a lease time is orphaned. */
  private readonly freeSince = new Map<number, number>();
  private handlers?: PartitionHandlers;
  private timer?: NodeJS.Timeout;
  /** Turns, one at a time. */
  private turns: Promise<void> = Promise.resolve();
  /** Whether a turn is queued or running. */
  private turning = false;
  /** The renewal under way. */
  private renewing?: Promise<void>;
  /** What this process writes in its leases. */
  private readonly value: string;
  private stopped = false;

  constructor(
    private readonly board: LeaseBoard,
    private readonly options: LeasedPartitionsOptions,
    private readonly now: () => number = Date.now,
  ) {
    this.leases = Array.from({ length: options.partitions }, (_, partition) => board.lease(partitionKey(partition)));
    this.wanting = board.lease(`${WANTING}${this.id}`);
    this.share = Math.ceil(options.partitions / options.replicas);
    this.value = JSON.stringify({ id: this.id, host: hostname(), pid: process.pid });
  }

  start(handlers: PartitionHandlers): void {
    this.handlers = handlers;
    this.enqueue();
    // A tick while a turn or a renewal still runs skips it: ones queued behind a slow one would only run late.
    this.timer = setInterval(
      () => {
        if (!this.renewing) this.renewing = this.renewAll().finally(() => (this.renewing = undefined));
        if (!this.turning) this.enqueue();
      },
      Math.max(50, Math.floor(this.options.leaseMs / 3)),
    );
  }

  async stop(): Promise<void> {
    this.stopped = true;
    // The leases are renewed until the turn under way is over: it may be taking a partition on.
    await this.turns;
    clearInterval(this.timer);
    await this.renewing;
    for (const partition of this.held()) await this.letGo(partition);
    await this.wanting.release();
    await this.options.closed?.();
  }

  /** The partitions this process holds a lease on, in order. */
  held(): number[] {
    return this.leases.flatMap((lease, partition) => (lease.held ? [partition] : []));
  }

  private enqueue(): void {
    this.turning = true;
    this.turns = this.turns
      .then(() => this.turn())
      .catch((error: unknown) => this.options.warn(`claiming timeline partitions failed, trying again: ${String(error)}`))
      .finally(() => (this.turning = false));
  }

  /**
   * Renews every lease held, all at once and apart from the turns: a turn taking a partition
   * on (loading its snapshot, which may outlast a lease) holds no renewal back. A partition
   * whose lease is lost is let go in a turn, after any take under way.
   */
  private async renewAll(): Promise<void> {
    const held = this.held();
    const renewals = await Promise.all(held.map((partition) => this.leases[partition]!.renew(this.value)));
    for (const [index, partition] of held.entries()) {
      const renewal = renewals[index]!;
      // A partition let go while its renewal waited its turn was not lost.
      if (!renewal.lost || renewal.why === 'not held') continue;
      this.options.warn(`lost the lease of timeline partition ${partition}: another process holds it now, or the server did not answer in time`);
      this.turns = this.turns
        .then(async () => {
          // Unless a turn took it again since.
          if (!this.leases[partition]!.held) await this.handlers?.release(partition);
        })
        .catch((error: unknown) => this.options.warn(`letting go of timeline partition ${partition} failed: ${String(error)}`));
    }
  }

  private async turn(): Promise<void> {
    if (this.stopped || !this.handlers) return;
    const value = this.value;
    const taken = new Set(await this.board.held());
    const now = this.now();
    for (let partition = 0; partition < this.leases.length; partition++) {
      if (taken.has(partitionKey(partition))) {
        this.freeSince.delete(partition);
        continue;
      }
      if (!this.freeSince.has(partition)) this.freeSince.set(partition, now);
      const orphaned = now - this.freeSince.get(partition)! >= this.options.leaseMs;
      if (this.stopped || (this.held().length >= this.share && !orphaned)) continue;
      if (!(await this.leases[partition]!.take(value))) continue;
      this.freeSince.delete(partition);
      try {
        await this.handlers.take(partition);
      } catch (error) {
        this.options.warn(`could not take timeline partition ${partition}, leaving it to another process: ${String(error)}`);
        await this.leases[partition]!.release();
      }
    }
    await this.balance(taken, value);
  }

  /** Says so when below its share; lets one partition go when above it and another process wants one. */
  private async balance(taken: ReadonlySet<string>, value: string): Promise<void> {
    const held = this.held();
    if (held.length >= this.share) await this.wanting.release();
    else if (!this.wanting.held) await this.wanting.take(value);
    else if ((await this.wanting.renew(value)).lost) await this.wanting.take(value);
    const othersWant = [...taken].some((key) => key.startsWith(WANTING) && key !== this.wanting.key);
    if (othersWant && held.length > this.share) await this.letGo(held[held.length - 1]!);
  }

  private async letGo(partition: number): Promise<void> {
    await this.handlers?.release(partition);
    await this.leases[partition]!.release();
  }
}
