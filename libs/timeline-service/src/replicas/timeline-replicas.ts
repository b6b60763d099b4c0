import { setImmediate as nextTurn } from 'node:timers/promises';
import { Logger } from '@nestjs/common';
import type { DeliverRequest } from '@feedmill/contracts';
import type { Snapshottable, SnapshotSteps, TimelineStore } from '@feedmill/stores';
import type { MessageLink } from '@feedmill/transport';
import { isReplicaMessage, toCopied, type ReaderLists, type ReplicaMessage } from './replica-messages.js';

/** Injection token for the {@link TimelineReplicas} of a standalone whose HTTP workers hold copies of the timelines. */
export const TIMELINE_REPLICAS = Symbol('TimelineReplicas');

/** A store the replicas can copy: memory timelines, which snapshot themselves. */
export type CopiedStore = TimelineStore & Snapshottable;

interface Replica {
  readonly link: MessageLink;
  /** It asked for the timelines; it is sent them once replication is open and again after any start over. */
  asked: boolean;
  /** A snapshot is being taken for it. */
  copying: boolean;
  /** Sent a snapshot: the batches applied since are sent to it. */
  joined: boolean;
  /** Where its copy stands, as it last said. */
  position: number;
  /** Batches applied this turn, sent together at its end. */
  pending: DeliverRequest[];
  /** The lists of readers sent to it since its snapshot (see `CopiedDelivery`). */
  lists: ReaderLists;
}

interface PositionWaiter {
  position: number;
  resolve: (reached: boolean) => void;
  timer: ReturnType<typeof setTimeout>;
}

/**
 * The copies of the memory timelines that a standalone's HTTP workers hold, so that each
 * answers timeline reads from its own memory instead of asking this process over IPC (see
 * `HTTP_WORKER_READS`). This process stays the only writer: a worker's copy starts from a
 * snapshot of the timelines, and then receives every batch of deliveries this process
 * applies, in the order it applied them, which the copy applies alike (a batch names the
 * position it starts from, so a copy applies nothing twice and notices a gap).
 *
 * A wait for the timelines to reach a position ({@link reach}, which follows and unfollows
 * make before they answer) also waits for every copy, so that a page read through any
 * worker after the answer shows the change.
 */
export class TimelineReplicas {
  private readonly logger = new Logger('timeline-replicas');
  private readonly replicas = new Set<Replica>();
  private readonly waiters = new Set<PositionWaiter>();
  private source: (() => CopiedStore | undefined) | undefined;
  private opened = false;
  private flushing = false;

  /**
   * Serves the copy of the worker at the other end of `link`. Returns a function that
   * forgets it, for when the worker is gone.
   */
  serve(link: MessageLink): () => void {
    const replica: Replica = { link, asked: false, copying: false, joined: false, position: 0, pending: [], lists: new Map() };
    this.replicas.add(replica);
    link.on('message', (message) => {
      if (!isReplicaMessage(message)) return;
      if (message.replica === 'join') {
        replica.asked = true;
        replica.joined = false;
        void this.copyTo(replica);
      } else if (message.replica === 'applied') {
        replica.position = message.position;
        this.wake();
      }
    });
    return () => {
      this.replicas.delete(replica);
      this.wake();
    };
  }

  /** Where the copies come from: the store the timeline service holds now. */
  bind(source: () => CopiedStore | undefined): void {
    this.source = source;
  }

  /**
   * Starts sending copies, once the timelines have caught up with the log: until then a
   * worker's reads go to this process, which answers them as unavailable.
   */
  open(): void {
    this.opened = true;
    for (const replica of this.replicas) if (replica.asked && !replica.joined) void this.copyTo(replica);
  }

  /** A batch the timelines applied, for every copy. */
  applied(request: DeliverRequest): void {
    let any = false;
    for (const replica of this.replicas) {
      if (!replica.joined) continue;
      replica.pending.push(request);
      any = true;
    }
    if (any && !this.flushing) {
      this.flushing = true;
      setImmediate(() => this.flush());
    }
  }

  /**
   * The timelines changed other than by a batch sent to the copies (a rebuild swapped the
   * store, or a failing batch was applied reader by reader): every copy starts over.
   */
  startOver(): void {
    for (const replica of this.replicas) {
      if (!replica.asked) continue;
      replica.joined = false;
      void this.copyTo(replica);
    }
  }

  /** Resolves true once every copy has applied the log up to `position`, or false after `timeoutMs`. */
  reach(position: number, timeoutMs: number): Promise<boolean> {
    if (this.behind(position) === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const waiter: PositionWaiter = { position, resolve, timer: setTimeout(() => this.stopWaiting(waiter, false), timeoutMs) };
      this.waiters.add(waiter);
    });
  }

  /** How many copies stand before `position`: a copy being sent counts as behind. */
  behind(position: number): number {
    let behind = 0;
    for (const replica of this.replicas) if (replica.asked && (!replica.joined || replica.position < position)) behind++;
    return behind;
  }

  /** Copies being served. */
  get count(): number {
    return this.replicas.size;
  }

  /**
   * Sends the worker a snapshot of the timelines. The store applies no batch from the
   * snapshot's first step to its last (see `Snapshottable.snapshotSteps`), and the replica
   * joins in the same turn as the last step, so the first batch it is sent starts where
   * the snapshot ends. A batch applied before it but announced after (its caller resumes
   * later) starts before: the copy finds it already applied and skips it.
   */
  private async copyTo(replica: Replica): Promise<void> {
    const store = this.source?.();
    if (!this.opened || replica.copying || !this.replicas.has(replica) || !store) return;
    replica.copying = true;
    try {
      const steps: SnapshotSteps = store.snapshotSteps?.() ?? onlyStep(store);
      for (;;) {
        const step = steps.next();
        if (step.done) {
          replica.joined = true;
          replica.pending = [];
          replica.lists = new Map();
          replica.link.send({ replica: 'snapshot', state: step.value } satisfies ReplicaMessage);
          this.logger.log(`sent a worker the timelines as of position ${step.value.position} (${step.value.payload.byteLength} bytes)`);
          return;
        }
        await nextTurn();
      }
    } catch (error) {
      this.logger.error(`cannot copy the timelines to a worker: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    } finally {
      replica.copying = false;
    }
  }

  private flush(): void {
    this.flushing = false;
    for (const replica of this.replicas) {
      if (replica.pending.length === 0) continue;
      const requests = replica.pending.map((request) => toCopied(request, replica.lists));
      replica.pending = [];
      replica.link.send({ replica: 'deliver', requests } satisfies ReplicaMessage);
    }
  }

  private wake(): void {
    for (const waiter of this.waiters) if (this.behind(waiter.position) === 0) this.stopWaiting(waiter, true);
  }

  private stopWaiting(waiter: PositionWaiter, reached: boolean): void {
    clearTimeout(waiter.timer);
    this.waiters.delete(waiter);
    waiter.resolve(reached);
  }
}

/** A store's snapshot taken in one step. */
// eslint-disable-next-line require-yield -- the steps of a store that takes its snapshot in one turn
function* onlyStep(store: Snapshottable): SnapshotSteps {
  return store.takeSnapshot();
}
