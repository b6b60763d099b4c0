import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { NatsConnection } from '@nats-io/transport-node';
import { JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import type { PlannerElection, PlannerRecord } from '../fanout-cluster.port.js';
import { clusterNames } from './names.js';

export interface KvPlannerElectionOptions {
  logStream: string;
  /** How long the lease lasts unless renewed: how long fan-out waits for a new planner after one dies. */
  leaseMs: number;
  warn: (message: string) => void;
}

const KEY = clusterNames('').plannerKey;

/**
 * The planner's lease as a key of a JetStream KV bucket (`<log>_fanout_planner`) whose
 * entries expire after the lease time: a process takes the lease by creating the key (which
 * fails while it exists), keeps it by updating it at the revision it last wrote (which fails
 * once another has taken it), three times per lease time, and gives it up by deleting it.
 */
export class KvPlannerElection implements PlannerElection {
  private readonly id = randomUUID();
  /** The revision this process last wrote the key at, while it holds the lease. */
  private revision: number | undefined;
  /** When the last successful write was sent: the lease lasts at least until then plus its time. */
  private renewedAt = 0;
  private caughtUp = false;
  private handlers?: { elected(): void; deposed(): void };
  private timer?: NodeJS.Timeout;
  /** Writes of the key, one at a time. */
  private writes: Promise<void> = Promise.resolve();
  private stopped = false;

  private constructor(
    private readonly kv: KV,
    private readonly options: KvPlannerElectionOptions,
  ) {}

  static async open(nc: NatsConnection, options: KvPlannerElectionOptions): Promise<KvPlannerElection> {
    const kvm = new Kvm(nc);
    const bucket = clusterNames(options.logStream).plannerBucket;
    // A bucket made with another lease time is used as it is: the first process's setting holds.
    const kv = await kvm.create(bucket, { history: 1, ttl: options.leaseMs }).catch(() => kvm.open(bucket));
    return new KvPlannerElection(kv, options);
  }

  campaign(handlers: { elected(): void; deposed(): void }): void {
    this.handlers = handlers;
    this.enqueue();
    this.timer = setInterval(() => this.enqueue(), Math.max(50, Math.floor(this.options.leaseMs / 3)));
  }

  async planner(): Promise<PlannerRecord | undefined> {
    const entry = await this.kv.get(KEY);
    if (!entry || entry.operation !== 'PUT') return undefined;
    return entry.json<PlannerRecord>();
  }

  report(caughtUp: boolean): Promise<void> {
    this.caughtUp = caughtUp;
    return this.enqueue();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.writes;
    if (this.revision === undefined) return;
    const revision = this.revision;
    this.revision = undefined;
    await this.kv.delete(KEY, { previousSeq: revision }).catch(() => undefined);
  }

  private enqueue(): Promise<void> {
    this.writes = this.writes.then(() => this.stand());
    return this.writes;
  }

  /** Takes the lease if nobody holds it, or renews it if this process does. */
  private async stand(): Promise<void> {
    if (this.stopped) return;
    const sent = Date.now();
    const record: PlannerRecord = { id: this.id, host: hostname(), pid: process.pid, caughtUp: this.caughtUp };
    if (this.revision === undefined) {
      try {
        this.revision = await this.kv.create(KEY, JSON.stringify({ ...record, caughtUp: false }));
      } catch {
        return; // another process holds it (or the server did not answer): try again at the next turn
      }
      this.renewedAt = sent;
      this.caughtUp = false;
      this.handlers?.elected();
      return;
    }
    try {
      this.revision = await this.kv.update(KEY, JSON.stringify(record), this.revision);
      this.renewedAt = sent;
    } catch (error) {
      const taken = error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamWrongLastSequence;
      // Unanswered for half the lease time, the lease may run out before a renewal gets through.
      if (taken || Date.now() - this.renewedAt > this.options.leaseMs / 2) {
        this.options.warn(taken ? 'the planner lease ran out and another process took it' : `could not renew the planner lease: ${String(error)}`);
        this.revision = undefined;
        this.handlers?.deposed();
      }
    }
  }
}
