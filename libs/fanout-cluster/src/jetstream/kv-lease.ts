import type { NatsConnection } from '@nats-io/transport-node';
import { closeNats, connectNats } from '@feedmill/event-log';
import { JetStreamApiCodes, JetStreamApiError, jetstream, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';

/** Unanswered writes a lease remembers: a renewal is sent about three times per lease time, so a few cover the time it can still be held. */
const MOST_UNANSWERED_KEPT = 8;

/** What a renewal found: still held, or lost and why. */
export type LeaseRenewal = { lost: false } | { lost: true; why: 'taken' | 'unanswered' | 'not held'; error: unknown };

/**
 * A lease as a key of a JetStream KV bucket whose entries expire after the lease time: a
 * process takes it by creating the key (which fails while it exists), keeps it by updating it
 * at the revision it last wrote (which fails once another has taken it), about three times
 * per lease time, and gives it up by removing the message of that revision from the stream.
 *
 * Removing the message, rather than writing the KV's delete marker, leaves the key's subject
 * empty, so the board can list the held keys from the stream's subjects alone (see
 * {@link KvLeaseBoard.held}); only the revision this process wrote can be removed, so a lease
 * another process has taken since stays.
 *
 * A write the server applied but did not answer in time (its reply lost or late) leaves the
 * key at a revision this process never learnt, and its next write is refused as if another
 * process had taken the lease. So a refused write looks at the key first: when it holds a
 * value this process sent in a write whose answer never came, the lease is still its own,
 * and it goes on from that revision. Values must name their holder (each process writes its
 * own id), so that no other process's write reads as one of these.
 */
export class KvLease {
  /** The revision this process last wrote the key at, while it holds the lease. */
  private revision: number | undefined;
  /** When the last successful write was sent: the lease lasts at least until then plus its time. */
  private renewedAt = 0;
  /** Its operations, one at a time: a release waits for a renewal under way, and gives up the revision that wrote. */
  private operations: Promise<unknown> = Promise.resolve();
  /**
   * Writes sent since the last one answered whose answer never came, which the server may
   * have applied: their values, and when each was sent.
   */
  private unanswered: Array<{ value: string; sent: number }> = [];

  constructor(
    private readonly kv: KV,
    private readonly bucket: BucketStream,
    readonly key: string,
    private readonly leaseMs: number,
  ) {}

  get held(): boolean {
    return this.revision !== undefined;
  }

  /** Takes the lease if nobody holds it, writing `value`; false if another does (or the server did not answer). */
  take(value: string): Promise<boolean> {
    return this.inTurn(() => this.create(value));
  }

  /**
   * Renews the lease held, writing `value`. It is lost once another process has taken it, or
   * when no renewal got through for half the lease time (it may run out before the next one
   * does); a failure before then keeps it, for the next renewal to try again.
   */
  renew(value: string): Promise<LeaseRenewal> {
    return this.inTurn(() => this.update(value));
  }

  /** Gives the lease up at once, so that another process may take it without waiting for it to run out. */
  release(): Promise<void> {
    return this.inTurn(() => this.remove());
  }

  private inTurn<T>(operation: () => Promise<T>): Promise<T> {
    const done = this.operations.then(operation, operation);
    this.operations = done.catch(() => undefined);
    return done;
  }

  private async create(value: string): Promise<boolean> {
    const sent = Date.now();
    try {
      this.written(await this.kv.create(this.key, value), sent);
      return true;
    } catch (error) {
      if (!isRefusal(error)) this.sentUnanswered(value, sent);
      // The key exists: perhaps written by a create of this process whose answer never came.
      else if (await this.foundOwnWrite()) {
        // Held only once a write of its own is answered now: an unanswered one proves nothing.
        const renewal = await this.update(value);
        if (!renewal.lost && this.unanswered.length === 0) return true;
        this.revision = undefined;
      }
      return false;
    }
  }

  private async update(value: string): Promise<LeaseRenewal> {
    // Given up (or lost) before this renewal's turn came.
    if (this.revision === undefined) return { lost: true, why: 'not held', error: new Error('not held') };
    const sent = Date.now();
    try {
      this.written(await this.kv.update(this.key, value, this.revision), sent);
      return { lost: false };
    } catch (error) {
      const taken = isRefusal(error) && error.code === JetStreamApiCodes.StreamWrongLastSequence;
      if (!taken) this.sentUnanswered(value, sent);
      // Refused at the revision this process knew, when an unanswered write of its own moved the key on: still held.
      if (taken && (await this.foundOwnWrite())) return this.update(value);
      if (!taken && Date.now() - this.renewedAt <= this.leaseMs / 2) return { lost: false };
      // Unanswered writes are kept: a take may still find one of them holding the key.
      this.revision = undefined;
      return { lost: true, why: taken ? 'taken' : 'unanswered', error };
    }
  }

  /** Remembers a write whose answer never came; the last few only, for a server away for long. */
  private sentUnanswered(value: string, sent: number): void {
    if (this.unanswered.push({ value, sent }) > MOST_UNANSWERED_KEPT) this.unanswered.shift();
  }

  private written(revision: number, sent: number): void {
    this.revision = revision;
    this.renewedAt = sent;
    this.unanswered = [];
  }

  /**
   * Whether the key holds a value this process sent in a write whose answer never came; if
   * so, the lease goes on from that revision. Each such write is adopted once at most: they
   * are forgotten here once the key was read.
   */
  private async foundOwnWrite(): Promise<boolean> {
    const unanswered = this.unanswered;
    if (unanswered.length === 0) return false;
    let entry;
    try {
      entry = await this.kv.get(this.key);
    } catch {
      // Not looked at: they may still be found by the next refused write.
      return false;
    }
    this.unanswered = [];
    const own = entry?.operation === 'PUT' ? unanswered.find((write) => write.value === entry.string()) : undefined;
    if (!entry || !own || (this.revision !== undefined && entry.revision <= this.revision)) return false;
    // A process writes the same value again and again, so the write in the key may be an
    // earlier, answered one: the lease dates from no later than the last answered write.
    this.written(entry.revision, Math.min(own.sent, this.renewedAt));
    return true;
  }

  private async remove(): Promise<void> {
    // An unanswered write may have moved the key on: the revision to remove is then that one.
    await this.foundOwnWrite();
    if (this.revision === undefined) return;
    const revision = this.revision;
    this.revision = undefined;
    // Refused when the revision is gone: the lease ran out, and perhaps another took it.
    await this.bucket.jsm.streams.deleteMessage(this.bucket.stream, revision, false).catch(() => undefined);
  }
}

/** The server answered, and refused the write (the key was written since, or exists): not a write whose fate is unknown. */
function isRefusal(error: unknown): error is JetStreamApiError {
  return error instanceof JetStreamApiError;
}

/** The stream under a KV bucket, and the prefix of its keys' subjects. */
interface BucketStream {
  jsm: JetStreamManager;
  stream: string;
  subjectPrefix: string;
}

/** The leases of one KV bucket, whose entries run out after `leaseMs` unless renewed. */
export class KvLeaseBoard {
  private constructor(
    private readonly kv: KV,
    private readonly bucket: BucketStream,
    private readonly leaseMs: number,
  ) {}

  /** Opens the bucket, making it if it is missing; a bucket made with another lease time is used as it is (the first process's setting holds). */
  static async open(nc: NatsConnection, bucket: string, leaseMs: number): Promise<KvLeaseBoard> {
    // Every request gets a third of the lease time (500 ms at least), not JetStream's 5 s:
    // a renewal the server does not answer is given up and tried again while the lease still
    // runs, rather than waited for past the lease's end, when another process may hold it.
    // The bucket is made or found with JetStream's own timeouts: a start during a leader
    // election waits as long as any other request would.
    const setup = new Kvm(nc);
    await setup.create(bucket, { history: 1, ttl: leaseMs }).catch(() => setup.open(bucket));
    const timeout = Math.max(500, Math.floor(leaseMs / 3));
    const kv = await new Kvm(jetstream(nc, { timeout, checkAPI: false })).open(bucket);
    return new KvLeaseBoard(kv, { jsm: await jetstreamManager(nc, { timeout, checkAPI: false }), stream: `KV_${bucket}`, subjectPrefix: `$KV.${bucket}.` }, leaseMs);
  }

  lease(key: string): KvLease {
    return new KvLease(this.kv, this.bucket, key, this.leaseMs);
  }

  /**
   * The keys of the leases somebody holds now: the subjects the bucket's stream has a message
   * on, since a lease's message is removed when it is given up or runs out. One request; the
   * KV's own key listing opens a consumer, which waits for a heartbeat (5 s or far longer)
   * when a key it counted runs out before it is delivered.
   */
  async held(): Promise<string[]> {
    const info = await this.bucket.jsm.streams.info(this.bucket.stream, { subjects_filter: `${this.bucket.subjectPrefix}>` });
    return Object.keys(info.state.subjects ?? {}).map((subject) => subject.slice(this.bucket.subjectPrefix.length));
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
    return { board: await KvLeaseBoard.open(nc, `${options.logStream}_timeline_partitions`, options.leaseMs), close: () => closeNats(nc) };
  } catch (error) {
    await nc.close();
    throw error;
  }
}
