/**
 * The append-only event log every command writes to and every projection reads from.
 *
 * Positions are global and increase with every event; "from position 0" means from the start.
 * The file and JetStream logs number events 1, 2, 3...; KurrentDB uses commit positions,
 * which have gaps. Revisions count events within one stream, from 0.
 */
export interface NewEvent {
  type: string;
  data: unknown;
  metadata?: Record<string, unknown>;
}

export interface RecordedEvent {
  stream: string;
  revision: number;
  position: number;
  type: string;
  data: unknown;
  metadata: Record<string, unknown>;
  /** ISO time at which the log stored the event. */
  recordedAt: string;
  /**
   * The log vouches that `type`, `data` and `metadata` are what its appender handed it,
   * unchanged (checksummed on disk, and appended only by the processes that own it): a
   * reader that checked events before encoding them need not check them again.
   * @defaultValue false
   */
  trusted?: boolean;
}

/**
 * `'no_stream'`: the stream must not exist yet. A number: the revision of the stream's last
 * event. `'any'`: no check.
 */
export type ExpectedVersion = number | 'no_stream' | 'any';

export interface AppendOptions {
  /** @defaultValue `'any'` */
  expectedVersion?: ExpectedVersion;
}

export interface AppendResult {
  /** The revision of the last appended event: pass it as the next `expectedVersion`. */
  nextExpectedVersion: number;
  /** The global position of the last appended event. */
  position: number;
  /**
   * Set by the sealed log when content of the append was sealed with a key that an erasure
   * destroyed while the append was under way: every reader gets tombstones in its place, so
   * the appender must not apply what it decided as it wrote it, but what the log now gives.
   */
  contentErased?: true;
}

export interface SubscribeOptions {
  /** Deliver events strictly after this position. @defaultValue 0 */
  from?: number;
  /** Called with each batch in log order; the next batch waits for the returned promise. */
  onEvents: (events: readonly RecordedEvent[]) => Promise<void> | void;
  /**
   * Told about a failed batch, or a failed read of the log, before it is retried; `attempt`
   * counts the failures of that kind in a row (a read of the log's push stream and the
   * batches are counted apart). @defaultValue logs nothing
   */
  onError?: (error: unknown, attempt: number) => void;
  /** @defaultValue 512 */
  maxBatch?: number;
  /**
   * The most events per batch until the subscription has handled every event that existed
   * when it began (a catch-up, where larger batches cost less per event). @defaultValue `maxBatch`
   */
  catchUpBatch?: number;
  /**
   * Whether it replays the log beside the process's other subscriptions that say so (a
   * standalone's projections and fan-out at a start): a log that keeps decoded records for
   * readers behind (the file log) holds each of them, while it catches up, within reach of
   * the slowest of them, so that each record is decoded once for all. Other logs ignore it.
   * @defaultValue false
   */
  catchUpTogether?: boolean;
}

export interface Subscription {
  /** Resolves once every event that existed when the subscription began has been handled. */
  readonly caughtUp: Promise<void>;
  /** Position of the last event handled. */
  readonly position: number;
  stop(): Promise<void>;
}

export interface EventLog {
  appendToStream(stream: string, events: readonly NewEvent[], options?: AppendOptions): Promise<AppendResult>;
  /** Every event of one stream in order; empty when the stream does not exist. */
  readStream(stream: string): Promise<RecordedEvent[]>;
  /** Delivers every event after `from` in global order, then follows new ones as they arrive. */
  subscribeToAll(options: SubscribeOptions): Subscription;
  /** Subscriptions started and not yet stopped: a stopped one is forgotten. */
  readonly openSubscriptions: number;
  /**
   * True when no other process can append to this log (the file log holds its directory's
   * lock), so that what this process's projections hold is all there is once its own
   * appends are applied; a log that may have other writers leaves it unset.
   */
  readonly soleWriter?: boolean;
  /** Position of the last durable event (0 when the log is empty). */
  headPosition(): Promise<number>;
  saveCheckpoint(consumer: string, position: number): Promise<void>;
  /** The last saved position of a consumer, or undefined if it never saved one. */
  loadCheckpoint(consumer: string): Promise<number | undefined>;
  close(): Promise<void>;
}

/** Injection token for the configured {@link EventLog}. */
export const EVENT_LOG = Symbol('EventLog');
