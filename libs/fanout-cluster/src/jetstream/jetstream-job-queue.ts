import type { NatsConnection } from '@nats-io/transport-node';
import { AckPolicy, JetStreamApiCodes, JetStreamApiError, RetentionPolicy, StorageType, jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager, type JsMsg, type MsgRequest, type NextMsgRequest } from '@nats-io/jetstream';
import type { DeliverRequest } from '@feedmill/contracts';
import { JobsStalledError, type FanoutJobQueue, type JobDelivery, type JobWorker } from '../fanout-cluster.port.js';
import { clusterNames } from './names.js';

/** How long one pull for a job waits before it asks again (and before a stopping worker ends). */
const PULL_EXPIRES_MS = 1_000;

export interface JetStreamJobQueueOptions {
  /** The log's stream name: jobs are kept apart per log, as clusters sharing a NATS server are. */
  logStream: string;
  /** How long a worker holds a job without renewing it before it goes to another. */
  leaseMs: number;
  /** Told of what a worker cannot do (its consumer failed, a job cannot be read). */
  warn: (message: string) => void;
  /** Without a word from the workers, how often a wait for jobs looks again. @defaultValue 100 ms */
  pollMs?: number;
}

/** Jobs published at once: a post to a million readers is 500 of them. */
const PUBLISH_WINDOW = 64;
/** How long a published job's id is remembered, so that a retried publish queues nothing new. */
const DUPLICATE_WINDOW_MS = 120_000;

const nanos = (ms: number) => ms * 1_000_000;

/**
 * Chunk jobs on a JetStream work-queue stream (`<log>_FANOUT_JOBS`, subjects
 * `fanout-jobs.<log>.<position>.<chunk>`) with one durable consumer that every fan-out
 * process pulls from. JetStream keeps the three states: a job not yet handed out is Pending;
 * one handed out and not acknowledged within the consumer's ack wait is InProgress under a
 * lease (renewed with `working()` while it is applied, and handed out again once it runs
 * out); one acknowledged is Done, and the work queue deletes it. The stream is on disk, so
 * that a restart of the server keeps what is not Done.
 *
 * A worker that finishes a job says so on core NATS (`fanout-jobs-done.<log>.<position>`,
 * once the server has taken the acknowledgement), so that a wait for an event's jobs looks
 * again at once rather than at its next poll; the poll stays for a word that is lost.
 */
export class JetStreamJobQueue implements FanoutJobQueue {
  private readonly names: ReturnType<typeof clusterNames>;

  private constructor(
    private readonly nc: NatsConnection,
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    private readonly options: JetStreamJobQueueOptions,
  ) {
    this.names = clusterNames(options.logStream);
  }

  static async open(nc: NatsConnection, options: JetStreamJobQueueOptions): Promise<JetStreamJobQueue> {
    const jsm = await jetstreamManager(nc);
    const { jobStream: stream, jobSubjectPrefix: prefix, jobConsumer } = clusterNames(options.logStream);
    // Both calls are idempotent for the same config, so processes starting together may all make them.
    await jsm.streams.add({
      name: stream,
      subjects: [`${prefix}.>`],
      retention: RetentionPolicy.Workqueue,
      storage: StorageType.File,
      duplicate_window: nanos(DUPLICATE_WINDOW_MS),
    });
    const consumer = { durable_name: jobConsumer, ack_policy: AckPolicy.Explicit, ack_wait: nanos(options.leaseMs), max_deliver: -1 };
    try {
      await jsm.consumers.add(stream, consumer);
    } catch (error) {
      // Another lease time than the consumer was made with: the newest process's setting holds.
      await jsm.consumers.update(stream, jobConsumer, { ack_wait: consumer.ack_wait }).catch(() => {
        throw error;
      });
    }
    return new JetStreamJobQueue(nc, jetstream(nc), jsm, options);
  }

  async publish(position: number, jobs: readonly DeliverRequest[], run: string): Promise<void> {
    for (let start = 0; start < jobs.length; start += PUBLISH_WINDOW) {
      const window = jobs.slice(start, start + PUBLISH_WINDOW);
      await Promise.all(
        window.map((job, offset) => {
          const chunk = start + offset;
          return this.js.publish(`${this.names.jobSubjectPrefix}.${position}.${chunk}`, JSON.stringify(job), { msgID: `${run}.${position}.${chunk}` });
        }),
      );
    }
  }

  /** Each idle worker waits with one pull request on the consumer. */
  async idleWorkers(): Promise<number> {
    return (await this.jsm.consumers.info(this.names.jobStream, this.names.jobConsumer)).num_waiting;
  }

  async remaining(position: number): Promise<number> {
    const info = await this.jsm.streams.info(this.names.jobStream, { subjects_filter: `${this.names.jobSubjectPrefix}.${position}.>` });
    let count = 0;
    for (const messages of Object.values(info.state.subjects ?? {})) count += messages;
    return count;
  }

  async untilDone(position: number, options: { stallMs: number; signal: AbortSignal }): Promise<boolean> {
    let wake: (() => void) | undefined;
    let timer: NodeJS.Timeout | undefined;
    const done = this.nc.subscribe(this.names.jobDoneSubject(position), { callback: () => wake?.() });
    const abort = () => wake?.();
    options.signal.addEventListener('abort', abort);
    try {
      let fewest = Number.POSITIVE_INFINITY;
      let progressAt = Date.now();
      while (!options.signal.aborted) {
        // Listening before looking: a job done between the look and the wait still wakes it.
        const woken = new Promise<void>((resolve) => {
          timer = setTimeout(resolve, this.options.pollMs ?? 100);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        const remaining = await this.remaining(position);
        if (remaining === 0) return true;
        if (remaining < fewest) {
          fewest = remaining;
          progressAt = Date.now();
        } else if (Date.now() - progressAt > options.stallMs) {
          throw new JobsStalledError(position, remaining, options.stallMs);
        }
        await woken;
      }
      return false;
    } finally {
      clearTimeout(timer);
      options.signal.removeEventListener('abort', abort);
      done.unsubscribe();
    }
  }

  async withdraw(position: number): Promise<number> {
    const { jobStream: stream, jobSubjectPrefix: prefix } = this.names;
    let withdrawn = 0;
    // Each job of the event, of whichever run, in the order of the stream.
    for (let seq = 1; ; ) {
      const next: NextMsgRequest = { next_by_subj: `${prefix}.${position}.>`, seq };
      // The server's message get takes `next_by_subj` (since 2.9), which nats.js types for direct gets only.
      const message = await this.jsm.streams.getMessage(stream, next as unknown as MsgRequest);
      if (!message) return withdrawn;
      // Erased as a worker erases what it applied. Not found: a worker finished it first.
      const deleted = await this.jsm.streams.deleteMessage(stream, message.seq, true).catch((error: unknown) => {
        if (error instanceof JetStreamApiError && error.code === JetStreamApiCodes.NoMessageFound) return false;
        throw error;
      });
      if (deleted) withdrawn++;
      seq = message.seq + 1;
    }
  }

  work(apply: (job: DeliverRequest, delivery: JobDelivery) => Promise<void>): JobWorker {
    let stopped = false;
    /** The pull under way, while this worker waits for a job. */
    let pulling: Promise<unknown> | undefined;
    const loop = (async () => {
      while (!stopped) {
        try {
          const consumer = await this.js.consumers.get(this.names.jobStream, this.names.jobConsumer);
          // One job at a time, pulled only once the last is done: a consume() would pull the
          // next as soon as one arrives, and a job buffered here would sit under a lease
          // nobody renews while another is applied (and count this busy process as waiting).
          while (!stopped) {
            const pull = consumer.next({ expires: PULL_EXPIRES_MS });
            pulling = pull;
            const message = await pull.finally(() => (pulling = undefined));
            // A job that arrives once stopping is handed back for another worker: stop() may no longer wait for it.
            if (message && stopped) {
              message.nak();
              break;
            }
            if (message) await this.handle(message, apply);
          }
        } catch (error) {
          if (stopped) break;
          this.options.warn(`taking fan-out jobs failed, trying again in a second: ${String(error)}`);
          await new Promise((resolve) => setTimeout(resolve, 1000));
        }
      }
    })();
    return {
      stop: async () => {
        stopped = true;
        // A job being applied is waited for. A pull waiting for a job ends within
        // PULL_EXPIRES_MS, except while the server is away: nats.js ends it only once the
        // connection is back, so it is waited for a little longer than that at most.
        if (pulling) await Promise.race([loop, new Promise((resolve) => setTimeout(resolve, PULL_EXPIRES_MS + 1_000).unref())]);
        else await loop;
      },
    };
  }

  private async handle(message: JsMsg, apply: (job: DeliverRequest, delivery: JobDelivery) => Promise<void>): Promise<void> {
    const tokens = message.subject.split('.');
    const delivery: JobDelivery = { position: Number(tokens[tokens.length - 2]), chunk: Number(tokens[tokens.length - 1]), attempt: message.info.deliveryCount };
    let job: DeliverRequest;
    try {
      job = message.json<DeliverRequest>();
    } catch (error) {
      this.options.warn(`dropped the fan-out job ${message.subject}, which is not JSON: ${String(error)}`);
      message.term();
      return;
    }
    const renew = setInterval(() => {
      try {
        message.working();
      } catch {
        // The connection is gone: the lease runs out, and the job goes to another worker.
      }
    }, Math.max(100, Math.floor(this.options.leaseMs / 3)));
    let applied = false;
    try {
      await apply(job, delivery);
      applied = true;
    } catch {
      // Back to the queue, after a pause that grows with each attempt (the caller says why it failed).
      message.nak(Math.min(this.options.leaseMs, 250 * 2 ** Math.min(delivery.attempt - 1, 10)));
    } finally {
      clearInterval(renew);
    }
    if (!applied || this.nc.isClosed()) return;
    // A job carries activities as users wrote them: once applied, its message is deleted with
    // `erase` (JetStream overwrites the bytes), where the acknowledgement alone would leave
    // them in the stream's block files, beyond the reach of a later erasure of their feed. A
    // job deleted but not acknowledged (the process died between) was applied: the planner's
    // wait sees it gone all the same.
    await this.jsm.streams.deleteMessage(this.names.jobStream, message.seq, true).catch(() => false);
    // Done once the server has it: a wait that looks again when told sees the job gone.
    // (A closed connection would only time out: its job goes to another worker once the lease runs out.)
    if (await message.ackAck().catch(() => false)) this.nc.publish(this.names.jobDoneSubject(delivery.position));
  }
}
