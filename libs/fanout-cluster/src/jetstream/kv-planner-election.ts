import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { NatsConnection } from '@nats-io/transport-node';
import type { PlannerElection, PlannerRecord } from '../fanout-cluster.port.js';
import { KvLeaseBoard, type KvLease } from './kv-lease.js';
import { clusterNames } from './names.js';

export interface KvPlannerElectionOptions {
  logStream: string;
  /** How long the lease lasts unless renewed: how long fan-out waits for a new planner after one dies. */
  leaseMs: number;
  warn: (message: string) => void;
}

const KEY = clusterNames('').plannerKey;

/**
 * The planner's lease as a {@link KvLease} on the key `planner` of the bucket
 * `<log>_fanout_planner`, renewed three times per lease time.
 */
export class KvPlannerElection implements PlannerElection {
  private readonly id = randomUUID();
  private caughtUp = false;
  private handlers?: { elected(): void; deposed(): void };
  private timer?: NodeJS.Timeout;
  /** Writes of the key, one at a time. */
  private writes: Promise<void> = Promise.resolve();
  private stopped = false;

  private readonly lease: KvLease;

  private constructor(
    private readonly board: KvLeaseBoard,
    private readonly options: KvPlannerElectionOptions,
  ) {
    this.lease = board.lease(KEY);
  }

  static async open(nc: NatsConnection, options: KvPlannerElectionOptions): Promise<KvPlannerElection> {
    return new KvPlannerElection(await KvLeaseBoard.open(nc, clusterNames(options.logStream).plannerBucket, options.leaseMs), options);
  }

  campaign(handlers: { elected(): void; deposed(): void }): void {
    this.handlers = handlers;
    this.enqueue();
    this.timer = setInterval(() => this.enqueue(), Math.max(50, Math.floor(this.options.leaseMs / 3)));
  }

  async planner(): Promise<PlannerRecord | undefined> {
    const value = await this.board.valueOf(KEY);
    return value === undefined ? undefined : (JSON.parse(value) as PlannerRecord);
  }

  async holds(): Promise<boolean> {
    return (await this.planner())?.id === this.id;
  }

  report(caughtUp: boolean): Promise<void> {
    this.caughtUp = caughtUp;
    return this.enqueue();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.writes;
    await this.lease.release();
  }

  private enqueue(): Promise<void> {
    this.writes = this.writes.then(() => this.stand());
    return this.writes;
  }

  /** Takes the lease if nobody holds it, or renews it if this process does. */
  private async stand(): Promise<void> {
    if (this.stopped) return;
    const record: PlannerRecord = { id: this.id, host: hostname(), pid: process.pid, caughtUp: this.caughtUp };
    if (!this.lease.held) {
      // Another process holds it (or the server did not answer): try again at the next turn.
      if (!(await this.lease.take(JSON.stringify({ ...record, caughtUp: false })))) return;
      this.caughtUp = false;
      this.handlers?.elected();
      return;
    }
    const renewal = await this.lease.renew(JSON.stringify(record));
    if (renewal.lost) {
      this.options.warn(renewal.why === 'taken' ? 'the planner lease ran out and another process took it' : `could not renew the planner lease: ${String(renewal.error)}`);
      this.handlers?.deposed();
    }
  }
}
