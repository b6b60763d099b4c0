import { mkdir, open, readFile, rename, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { assertConsumerName, assertExpectedVersion, EventLogClosedError } from '../errors.js';
import type {
  AppendOptions,
  AppendResult,
  EventLog,
  NewEvent,
  RecordedEvent,
  SubscribeOptions,
  Subscription,
} from '../event-log.port.js';
import { runSubscription, tracked } from '../subscription-loop.js';
import { encodeGroupFrame, encodeRecord, HEADER_BYTES } from './record-codec.js';
import { acquireDirectoryLock, type DirectoryLock } from './directory-lock.js';
import { CatchUpPacing } from './catch-up-pace.js';
import { LogRecords, MOST_KEPT_DECODED } from './log-records.js';
import { CorruptLogError, isNotWritable, LogNotWritableError, LogWriteFailedError } from './file-log-errors.js';
import { readLogFile } from './log-file-segments.js';
import { syncDirectory } from './sync-directory.js';
import { writeFully } from './write-fully.js';

export interface FileEventLogOptions {
  /** Directory holding `events.log`, `checkpoints/` and the lock file. Created if missing. */
  dir: string;
  /**
   * Told when a torn tail (the remains of a write a crash interrupted, never acknowledged)
   * was cut off at open. Damage a crash cannot explain is not cut: the open fails with a
   * {@link CorruptLogError}. @defaultValue ignores it
   */
  onTailRepaired?: (info: { keptBytes: number; cutBytes: number }) => void;
  /** Told of each group commit once it is durable: how many appends shared its write and fsync, and how long those took. @defaultValue ignores them */
  onGroupCommit?: (commit: { appends: number; seconds: number }) => void;
  /** The most bytes of the file read into one buffer at open (tests make it small). @defaultValue 1 GiB (`SEGMENT_BYTES`) */
  segmentBytes?: number;
}

interface PendingWrite {
  /** Each event's record as encoded, to keep in memory once written. */
  records: Buffer[];
  events: RecordedEvent[];
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * The embedded default log: one append-only file, fsync'd before any append is
 * acknowledged. Appends that arrive while a write is in flight are written together and
 * share the next fsync (group commit). Records are also kept in memory, as their bytes, for
 * fast replay, and decoded as they are read: a start that restores snapshots decodes only
 * the tail it replays. One process owns the directory at a time.
 *
 * Its records are trusted ({@link RecordedEvent.trusted}): each was checksummed on disk, or
 * handed to this log by the process itself.
 */
export class FileEventLog implements EventLog {
  private readonly committed: LogRecords;
  /**
   * Last revision per stream, counting appends not yet durable: decisions see them. Read
   * from the records at the first append, not at open: a start that appends nothing never
   * reads every record.
   */
  private streamRevisions?: Map<string, number>;
  private queue: PendingWrite[] = [];
  private flushing: Promise<void> | null = null;
  private failure: unknown = null;
  private closed = false;
  /** Checkpoint saves begun so far: each writes a temp file of its own. */
  private checkpointSaves = 0;
  private readonly waiters = new Set<() => void>();
  private readonly subscriptions = new Set<Subscription>();
  /** Subscriptions with `catchUpTogether`, of {@link subscriptions}. */
  private readonly catchingUpTogether = new Set<Subscription>();
  /** They read within the records the log keeps decoded of the slowest of them: each record is decoded once for all. */
  private readonly catchUpPacing = new CatchUpPacing(() => slowestOf(this.catchingUpTogether), MOST_KEPT_DECODED);
  private nextPosition: number;

  private constructor(
    private readonly dir: string,
    private readonly file: FileHandle,
    private readonly lock: DirectoryLock,
    committed: LogRecords,
    /** Bytes of the file that hold acknowledged records: where a failed write is cut back to. */
    private committedBytes: number,
    private readonly onGroupCommit?: FileEventLogOptions['onGroupCommit'],
  ) {
    this.committed = committed;
    this.nextPosition = committed.length + 1;
  }

  /**
   * Opens (or creates) the log in `options.dir`. Fails with a {@link LogNotWritableError}
   * when the directory cannot be written, and with a {@link CorruptLogError} when the file
   * holds damage other than a torn tail.
   */
  static async open(options: FileEventLogOptions): Promise<FileEventLog> {
    const lock = await notWritableExplained(options.dir, async () => {
      await mkdir(join(options.dir, 'checkpoints'), { recursive: true });
      return acquireDirectoryLock(options.dir);
    });
    const path = join(options.dir, 'events.log');
    try {
      const { segments, validBytes, damage } = await readLogFile(path, options.segmentBytes);
      const records = new LogRecords(segments);
      if (damage.kind === 'corrupt') throw new CorruptLogError(path, damage.offset, records.length + 1, damage.reason);
      const file = await notWritableExplained(options.dir, () => open(path, 'a+'));
      // A new file's name, like its first records, must survive a crash: its directory is
      // fsynced once, before anything is appended to it.
      if (validBytes === 0 && damage.kind === 'none') {
        await notWritableExplained(options.dir, () => syncDirectory(options.dir)).catch(async (error: unknown) => {
          await file.close();
          throw error;
        });
      }
      if (damage.kind === 'torn') {
        // A crash tore the last write: it was never acknowledged, so cutting it loses nothing.
        await notWritableExplained(options.dir, async () => {
          await file.truncate(validBytes);
          await file.sync();
        }).catch(async (error: unknown) => {
          await file.close();
          throw error;
        });
        options.onTailRepaired?.({ keptBytes: validBytes, cutBytes: damage.bytes });
      }
      return new FileEventLog(options.dir, file, lock, records, validBytes, options.onGroupCommit);
    } catch (error) {
      await lock.release();
      throw error;
    }
  }

  appendToStream(stream: string, events: readonly NewEvent[], options: AppendOptions = {}): Promise<AppendResult> {
    if (this.closed) return Promise.reject(new EventLogClosedError());
    if (this.failure) return Promise.reject(new EventLogClosedError('the event log failed a write, could not cut it back, and refuses more'));
    if (events.length === 0) return Promise.reject(new Error('appendToStream needs at least one event'));
    this.streamRevisions ??= this.committed.lastRevisions();
    const current = this.streamRevisions.get(stream) ?? -1;
    try {
      assertExpectedVersion(stream, options.expectedVersion, current);
    } catch (error) {
      return Promise.reject(error);
    }
    const recordedAt = new Date().toISOString();
    const recorded: RecordedEvent[] = [];
    const records: Buffer[] = [];
    let revision = current;
    for (const event of events) {
      revision += 1;
      const metadata = event.metadata ?? {};
      recorded.push({
        stream,
        revision,
        position: this.nextPosition++,
        type: event.type,
        data: event.data,
        metadata,
        recordedAt,
        trusted: true,
      });
      records.push(encodeRecord({ s: stream, r: revision, t: event.type, d: event.data, m: metadata, at: recordedAt }));
    }
    this.streamRevisions.set(stream, revision);
    const result = { nextExpectedVersion: revision, position: recorded[recorded.length - 1]!.position };
    return new Promise<AppendResult>((resolve, reject) => {
      this.queue.push({ records, events: recorded, resolve: () => resolve(result), reject });
      this.flushing ??= this.flush();
    });
  }

  /** Writes everything queued in one write and one fsync, then repeats while more arrived. */
  private async flush(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue;
      this.queue = [];
      const records = batch.flatMap((write) => write.records);
      const recordBytes = records.reduce((sum, record) => sum + record.length, 0);
      // The frame says where this write ends, so that a start after a power loss can tell it from acknowledged records.
      const buffers = [encodeGroupFrame(recordBytes), ...records];
      const length = buffers[0]!.length + recordBytes;
      const started = performance.now();
      try {
        await writeFully(this.file, buffers);
        await this.file.datasync();
        this.onGroupCommit?.({ appends: batch.length, seconds: (performance.now() - started) / 1000 });
      } catch (error) {
        await this.abandonWrite(batch, error as NodeJS.ErrnoException);
        break;
      }
      this.committedBytes += length;
      for (const write of batch) {
        const keepFrom = this.slowestSubscriber();
        for (const [index, event] of write.events.entries()) this.committed.add(write.records[index]!.subarray(HEADER_BYTES), event, keepFrom);
        write.resolve();
      }
      this.wakeSubscribers();
    }
    this.flushing = null;
    // An append made from a refused one's rejection was queued while this flush still ran.
    if (this.queue.length > 0) this.flushing = this.flush();
  }

  /**
   * Refuses the appends of a failed write and every one queued behind it (their positions
   * follow it), and cuts the file back to its acknowledged records, so that a later append
   * never sits behind a torn one: the log then takes appends again (a full disk that gets
   * space back). When the cut fails too, the log refuses every append from then on.
   */
  private async abandonWrite(batch: PendingWrite[], error: NodeJS.ErrnoException): Promise<void> {
    try {
      await this.file.truncate(this.committedBytes);
      await this.file.datasync();
    } catch (cutError) {
      this.failure = cutError;
    }
    // Appends queued meanwhile were numbered after the failed ones: refused with them.
    const refused = [...batch, ...this.queue];
    this.queue = [];
    this.nextPosition = this.committed.length + 1;
    this.streamRevisions = undefined; // read again from the records at the next append
    for (const write of refused) write.reject(new LogWriteFailedError(error));
  }

  private wakeSubscribers(): void {
    const waiting = [...this.waiters];
    this.waiters.clear();
    for (const wake of waiting) wake();
  }

  async readStream(stream: string): Promise<RecordedEvent[]> {
    return this.committed.ofStream(stream);
  }

  subscribeToAll(options: SubscribeOptions): Subscription {
    const pace = options.catchUpTogether ? this.catchUpPacing.begin(this.committed.length) : undefined;
    const subscription = runSubscription(options, {
      readAfter: (position, max) => {
        const allowed = pace ? pace.allowed(position, max) : max;
        return allowed === 0 ? [] : this.committed.readAfter(position, allowed, this.slowestSubscriber());
      },
      headPosition: () => this.committed.length,
      // Held back behind the slowest, it waits for the others; otherwise for a new record.
      waitForMore: (position, signal) => (pace?.held ? pace.waitForOthers(position, signal) : this.appendedAfter(position, signal)),
    });
    const handle = tracked(subscription, this.subscriptions);
    if (!pace) return handle;
    this.catchingUpTogether.add(handle);
    return {
      caughtUp: handle.caughtUp,
      get position() {
        return handle.position;
      },
      stop: async () => {
        await handle.stop();
        this.catchingUpTogether.delete(handle);
        // The slowest may be gone: those held back by it read on.
        this.catchUpPacing.moved();
      },
    };
  }

  /** Resolves once the log holds a record after `position`, or the signal aborts. */
  private appendedAfter(position: number, signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve) => {
      if (this.committed.length > position || signal.aborted) return resolve();
      const wake = () => {
        this.waiters.delete(wake);
        signal.removeEventListener('abort', wake);
        resolve();
      };
      this.waiters.add(wake);
      signal.addEventListener('abort', wake, { once: true });
    });
  }

  /** The lowest position a subscription stands at: records after it are still to be read. */
  private slowestSubscriber(): number {
    return slowestOf(this.subscriptions);
  }

  get openSubscriptions(): number {
    return this.subscriptions.size;
  }

  /** The directory's lock keeps every other process from appending. */
  readonly soleWriter = true;

  async headPosition(): Promise<number> {
    return this.committed.length;
  }

  async saveCheckpoint(consumer: string, position: number): Promise<void> {
    assertConsumerName(consumer);
    const path = join(this.dir, 'checkpoints', `${consumer}.json`);
    // A temp file of its own per save: two saves of one consumer at once wrote into one, and
    // left a file that no longer parsed.
    const temporary = `${path}.${++this.checkpointSaves}.tmp`;
    const handle = await open(temporary, 'w');
    try {
      await handle.writeFile(JSON.stringify({ position }));
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, path);
    await syncDirectory(join(this.dir, 'checkpoints'));
  }

  async loadCheckpoint(consumer: string): Promise<number | undefined> {
    assertConsumerName(consumer);
    try {
      const text = await readFile(join(this.dir, 'checkpoints', `${consumer}.json`), 'utf8');
      return (JSON.parse(text) as { position: number }).position;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.subscriptions].map((s) => s.stop()));
    await this.flushing;
    await this.file.close();
    await this.lock.release();
  }
}


/** Runs a step that creates or opens the log's files, and explains a directory that cannot be written. */
async function notWritableExplained<T>(dir: string, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    if (isNotWritable(error)) throw new LogNotWritableError(dir, error);
    throw error;
  }
}

/** The lowest position one of `subscriptions` stands at (Infinity for none). */
function slowestOf(subscriptions: ReadonlySet<Subscription>): number {
  let slowest = Infinity;
  for (const subscription of subscriptions) slowest = Math.min(slowest, subscription.position);
  return slowest;
}
