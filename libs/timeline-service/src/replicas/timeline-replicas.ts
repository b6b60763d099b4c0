import { setImmediate as nextTurn } from 'node:timers/promises';
import { Logger } from '@nestjs/common';
import type { DeliverRequest, FeedConfig } from '@feedmill/contracts';
import type { Snapshottable, SnapshotSteps, TimelineStore } from '@feedmill/stores';
import type { MessageLink } from '@feedmill/transport';
import { isReplicaMessage, ReaderLists, toCopied, type ReplicaMessage } from './replica-messages.js';

/** Injection token for the {@link TimelineReplicas} of a standalone whose HTTP workers hold copies of the timelines. */
export const TIMELINE_REPLICAS = Symbol('TimelineReplicas');

/** A store the replicas can copy: memory timelines, which snapshot themselves. */
export type CopiedStore = TimelineStore & Snapshottable;

/** What copies are made from: the store the timeline service holds, and the feed config it was built with. */
export interface CopySource {
  store: CopiedStore;
  config: FeedConfig;
}

interface Replica {
  readonly link: MessageLink;
  /**
   * `idle` until it asks for the timelines; `waiting` for a snapshot; `joined` once sent
   * one, from when every batch applied is sent to it.
   */
  state: 'idle' | 'waiting' | 'joined';
  /** The number of the snapshot it was sent: what it says about another is not about its copy. */
  epoch: number;
  /** Where its copy stands, as it last said (-1 until it says). */
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
  private source: () => CopySource | undefined = () => undefined;
  /** A snapshot being taken for the replicas waiting when it began. */
  private round: Promise<void> | undefined;
  /** Replicas came to wait during the round: another follows it. */
  private roundAgain = false;
  /** The store changed during the round: every replica waits for the next one. */
  private everyoneAgain = false;
  private epoch = 0;
  private flushing = false;

  /**
   * Serves the copy of the worker at the other end of `link`. Returns a function that
   * forgets it, for when the worker is gone.
   */
  serve(link: MessageLink): () => void {
    const replica: Replica = { link, state: 'idle', epoch: 0, position: -1, pending: [], lists: new ReaderLists() };
    this.replicas.add(replica);
    link.on('message', (message) => {
      if (!isReplicaMessage(message)) return;
      if (message.replica === 'join') {
        replica.state = 'waiting';
        this.copyToWaiting();
      } else if (message.replica === 'applied' && message.epoch === replica.epoch) {
        replica.position = message.position;
        this.wake();
      }
    });
    return () => {
      this.replicas.delete(replica);
      this.wake();
    };
  }

  /**
   * Where the copies come from: the store the timeline service holds and its config, or
   * undefined until it has caught up with the log (its reads would wait; a copy's would not).
   */
  bind(source: () => CopySource | undefined): void {
    this.source = source;
  }

  /**
   * What copies are made from changed (a rebuild swapped the store), became ready (caught
   * up with the log), or was changed other than by a batch sent to the copies (a failing
   * batch applied reader by reader): every copy starts over.
   */
  startOver(): void {
    if (this.round) this.everyoneAgain = true;
    for (const replica of this.replicas) if (replica.state !== 'idle') replica.state = 'waiting';
    this.copyToWaiting();
  }

  /** A batch `store` applied, for every copy of it. */
  applied(store: TimelineStore, request: DeliverRequest): void {
    // Applied to a store since replaced: the copies are of the new one.
    if (this.source()?.store !== store) return;
    let any = false;
    for (const replica of this.replicas) {
      if (replica.state !== 'joined') continue;
      replica.pending.push(request);
      any = true;
    }
    if (any && !this.flushing) {
      this.flushing = true;
      setImmediate(() => this.flush());
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

  /** How many copies stand before `position`: one waiting for its snapshot counts as behind. */
  behind(position: number): number {
    let behind = 0;
    for (const replica of this.replicas) if (replica.state === 'waiting' || (replica.state === 'joined' && replica.position < position)) behind++;
    return behind;
  }

  /** Copies being served. */
  get count(): number {
    return this.replicas.size;
  }

  /** Starts a round for the replicas waiting, or marks that one must follow the round under way. */
  private copyToWaiting(): void {
    if (this.round) {
      this.roundAgain = true;
      return;
    }
    this.round = this.copyRound().finally(() => {
      this.round = undefined;
      if (this.everyoneAgain) for (const replica of this.replicas) if (replica.state !== 'idle') replica.state = 'waiting';
      const again = this.roundAgain || this.everyoneAgain;
      this.roundAgain = this.everyoneAgain = false;
      if (again) this.copyToWaiting();
    });
  }

  /**
   * Sends the replicas waiting one snapshot of the timelines. The store applies no batch
   * from the snapshot's first step to its last (see `Snapshottable.snapshotSteps`), and the
   * replicas join in the same turn as the last step, so the first batch they are sent
   * starts where the snapshot ends. A batch applied before it but announced after (its
   * caller resumes later) starts before: a copy finds it already applied and skips it.
   */
  private async copyRound(): Promise<void> {
    const source = this.source();
    // Not caught up yet: startOver() comes once it is.
    if (!source || ![...this.replicas].some((replica) => replica.state === 'waiting')) return;
    try {
      const steps: SnapshotSteps = source.store.snapshotSteps?.() ?? onlyStep(source.store);
      for (;;) {
        const step = steps.next();
        if (!step.done) {
          await nextTurn();
          continue;
        }
        // Replaced meanwhile, or changed other than by batches: this snapshot is of no use.
        if (this.everyoneAgain || this.source()?.store !== source.store) return;
        const epoch = ++this.epoch;
        const joining = [...this.replicas].filter((replica) => replica.state === 'waiting');
        for (const replica of joining) {
          Object.assign(replica, { state: 'joined', epoch, position: -1, pending: [], lists: new ReaderLists() });
          replica.link.send({ replica: 'snapshot', state: step.value, config: source.config, epoch } satisfies ReplicaMessage);
        }
        this.logger.log(`sent ${joining.length} worker(s) the timelines as of position ${step.value.position} (${step.value.payload.byteLength} bytes)`);
        return;
      }
    } catch (error) {
      this.logger.error(`cannot copy the timelines to the workers: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
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
