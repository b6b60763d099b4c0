import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { Kvm } from '@nats-io/kv';
import type { PlannerRecord } from '../fanout-cluster.port.js';
import { clusterNames } from './names.js';

/** A log's fan-out cluster seen from outside it, changing nothing. */
export interface FanoutClusterView {
  /** The planner as its lease says, if any holds it. */
  planner(): Promise<PlannerRecord | undefined>;
  /**
   * Jobs not handed out yet (Pending), handed out and not done (InProgress, one at most per
   * process), and processes waiting for one.
   */
  jobs(): Promise<{ pending: number; inProgress: number; waitingWorkers: number }>;
  close(): Promise<void>;
}

/** Looks at the fan-out cluster of the log `logStream` (for operations, and tests that kill its processes). */
export async function inspectFanoutCluster(options: { servers: string | string[]; logStream: string }): Promise<FanoutClusterView> {
  const nc = await connect({ servers: options.servers });
  const names = clusterNames(options.logStream);
  const jsm = await jetstreamManager(nc);
  const kvm = new Kvm(nc);
  return {
    async planner() {
      const entry = await (await kvm.open(names.plannerBucket)).get(names.plannerKey);
      return entry?.operation === 'PUT' ? entry.json<PlannerRecord>() : undefined;
    },
    async jobs() {
      const info = await jsm.consumers.info(names.jobStream, names.jobConsumer);
      return { pending: info.num_pending, inProgress: info.num_ack_pending, waitingWorkers: info.num_waiting };
    },
    close: () => nc.close(),
  };
}
