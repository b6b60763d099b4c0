import type { NatsConnection } from '@nats-io/transport-node';
import { connectNats } from '@feedmill/event-log';
import { JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';

/** What a renewal found: still held, or lost and why. */
export type LeaseRenewal = { lost: false } | { lost: true; why: 'taken' | 'unanswered'; error: unknown };

/**
 * A lease as a key of a JetStream KV bucket whose entries expire after the lease time: a
 * process takes it by creating the key (which fails while it exists), keeps it by updating it
 * at the revision it last wrote (which fails once another has taken it), about three times
 * per lease time, and gives it up by deleting it at that revision.
 */
export class KvLease {
  /** The revision this process last wrote the key at, while it holds the lease. */
  private revision: number | undefined;
  /** When the last successful write was sent: the lease lasts at least until then plus its time. */
  private renewedAt = 0;

  constructor(
    private readonly kv: KV,
    readonly key: string,
    private readonly leaseMs: number,
  ) {}

  get held(): boolean {
    return this.revision !== undefined;
  }

  /** Takes the lease if nobody holds it, writing `value`; false if another does (or the server did not answer). */
  async take(value: string): Promise<boolean> {
    const sent = Date.now();
    try {
      this.revision = await this.kv.create(this.key, value);
    } catch {
      return false;
    }
    this.renewedAt = sent;
    return true;
  }

  /**
   * Renews the lease held, writing `value`. It is lost once another process has taken it, or
   * when no renewal got through for half the lease time (it may run out before the next one
   * does); a failure before then keeps it, for the next renewal to try again.
   */
  async renew(value: string): Promise<LeaseRenewal> {
    if (this.revision === undefined) return { lost: true, why: 'taken', error: new Error('not held') };
    const sent = Date.now();
    try {
      this.revision = await this.kv.update(this.key, value, this.revision);
      this.renewedAt = sent;
      return { lost: false };
    } catch (error) {
      const taken = error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamWrongLastSequence;
      if (!taken && Date.now() - this.renewedAt <= this.leaseMs / 2) return { lost: false };
      this.revision = undefined;
      return { lost: true, why: taken ? 'taken' : 'unanswered', error };
    }
  }

  /** Gives the lease up at once, so that another process may take it without waiting for it to run out. */
  async release(): Promise<void> {
    if (this.revision === undefined) return;
    const revision = this.revision;
    this.revision = undefined;
    await this.kv.delete(this.key, { previousSeq: revision }).catch(() => undefined);
  }
}

/** The leases of one KV bucket, whose entries run out after `leaseMs` unless renewed. */
export class KvLeaseBoard {
  private constructor(
    private readonly kv: KV,
    private readonly leaseMs: number,
  ) {}

  /** Opens the bucket, making it if it is missing; a bucket made with another lease time is used as it is (the first process's setting holds). */
  static async open(nc: NatsConnection, bucket: string, leaseMs: number): Promise<KvLeaseBoard> {
    const kvm = new Kvm(nc);
    const kv = await kvm.create(bucket, { history: 1, ttl: leaseMs }).catch(() => kvm.open(bucket));
    return new KvLeaseBoard(kv, leaseMs);
  }

  lease(key: string): KvLease {
    return new KvLease(this.kv, key, this.leaseMs);
  }

  /** The keys of the leases somebody holds now. */
  async held(): Promise<string[]> {
    const keys: string[] = [];
    for await (const key of await this.kv.keys()) keys.push(key);
    return keys;
  }

  /** What the holder of `key` wrote, if anybody holds it. */
  async valueOf(key: string): Promise<string | undefined> {
    const entry = await this.kv.get(key);
    return entry && entry.operation === 'PUT' ? entry.string() : undefined;
  }
}

/**
 * The leases of the timeline partitions of the log `logStream` (bucket
 * `<log>_timeline_partitions`), on a NATS connection of their own, which `close` ends.
 */
export async function connectTimelinePartitionLeases(options: { servers: string | string[]; logStream: string; leaseMs: number }): Promise<{ board: KvLeaseBoard; close(): Promise<void> }> {
  const nc = await connectNats({ servers: options.servers });
  try {
    return { board: await KvLeaseBoard.open(nc, `${options.logStream}_timeline_partitions`, options.leaseMs), close: () => nc.drain() };
  } catch (error) {
    await nc.close();
    throw error;
  }
}
