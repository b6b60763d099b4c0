import type { DeliverRequest } from '@feedmill/contracts';

/**
 * What several fan-out processes share: a work queue of chunk jobs, the election of the one
 * that plans, and a way to ask the planner from any of them.
 */
export interface FanoutCluster {
  readonly jobs: FanoutJobQueue;
  readonly election: PlannerElection;
  readonly plannerRequests: PlannerRequests;
  close(): Promise<void>;
}

export const FANOUT_CLUSTER = Symbol('FanoutCluster');

/**
 * Chunk jobs of large deliveries (seed 001's fan-out lock): a published job is Pending, a
 * job a worker holds is InProgress under a lease that runs out unless the worker renews it,
 * and a job applied is Done and gone. A job whose worker dies is given to another once its
 * lease has run out: every job is applied at least once.
 */
export interface FanoutJobQueue {
  /**
   * Publishes the jobs of the log event at `position`; resolves once the queue holds every
   * one. `run` names one planning run: publishing the same jobs again within it (a retry)
   * queues nothing new.
   */
  publish(position: number, jobs: readonly DeliverRequest[], run: string): Promise<void>;
  /** How many processes wait for a job now: with none but the planner, sharing a delivery out gains nothing. */
  idleWorkers(): Promise<number>;
  /** How many jobs of the event at `position` are not Done yet (Pending or InProgress). */
  remaining(position: number): Promise<number>;
  /**
   * Resolves true once no job of the event at `position` is left, false if `signal` aborts
   * first; fails with {@link JobsStalledError} when their number has not fallen for `stallMs`.
   */
  untilDone(position: number, options: { stallMs: number; signal: AbortSignal }): Promise<boolean>;
  /**
   * Takes back every job of the event at `position` that is not Done, of whichever run: each
   * is deleted from the queue (its bytes erased), and a worker that holds one finds it gone.
   * Resolves with how many were taken back. For a planner that delivers the event itself
   * once its jobs stalled.
   */
  withdraw(position: number): Promise<number>;
  /**
   * Takes jobs one at a time, from whichever event, until stopped. A job is Done when
   * `apply` resolves; when it rejects, the job goes back to the queue and comes again after
   * a pause. The lease is renewed while `apply` runs.
   */
  work(apply: (job: DeliverRequest, delivery: JobDelivery) => Promise<void>): JobWorker;
}

/** Which job a worker holds, and how many times it was handed out (1 the first time). */
export interface JobDelivery {
  position: number;
  chunk: number;
  attempt: number;
}

export interface JobWorker {
  /** Stops taking jobs; resolves once the job in hand, if any, is Done or given back. */
  stop(): Promise<void>;
}

/**
 * Chooses one process at a time to plan fan-out, by a lease that its holder renews and that
 * runs out when it stops renewing (it died, or lost its connection). Two planners for a
 * moment are harmless (timeline refuses deliveries that do not start where it stands, and a
 * job once it has moved on); the election only keeps them from doing the same work.
 */
export interface PlannerElection {
  /**
   * Stands for planner until {@link stop}: `elected` when this process takes the lease,
   * `deposed` when it can no longer be sure it holds it.
   */
  campaign(handlers: { elected(): void; deposed(): void }): void;
  /** The planner as its lease says, if any holds it. */
  planner(): Promise<PlannerRecord | undefined>;
  /**
   * Whether this process holds the lease as the key says now, not as its last renewal did: a
   * planner whose renewals hang learns it was deposed only when they fail, after another may
   * have taken over.
   */
  holds(): Promise<boolean>;
  /** The planner says whether it has caught up with the log (others report it as fan-out's readiness). */
  report(caughtUp: boolean): Promise<void>;
  /** Stops standing; a lease held is given up at once, so that another process takes over without waiting for it to run out. */
  stop(): Promise<void>;
}

/** Who plans: its process, and whether it has caught up with the log. */
export interface PlannerRecord {
  id: string;
  host: string;
  pid: number;
  caughtUp: boolean;
}

/** Requests that only the planner can answer (a dead-letter replay moves timeline), asked from any process. */
export interface PlannerRequests {
  /**
   * Answers requests named `name` until the handle is stopped (while this process plans);
   * resolves once the server routes them here.
   */
  serve(name: string, answer: () => Promise<unknown>): Promise<{ stop(): void }>;
  /** Asks the planner; fails with `unavailable` when no process plans. */
  ask(name: string, timeoutMs: number): Promise<unknown>;
}

/** The jobs of a large delivery stopped getting done: no worker can apply them, or none runs. */
export class JobsStalledError extends Error {
  override readonly name = 'JobsStalledError';
  constructor(
    readonly position: number,
    readonly remaining: number,
    readonly stallMs: number,
  ) {
    super(`${remaining} chunk jobs of the fan-out at position ${position} got no fewer in ${stallMs} ms`);
  }
}
