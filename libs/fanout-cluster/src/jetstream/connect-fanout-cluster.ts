import type { NatsConnection } from '@nats-io/transport-node';
import { closeNats, connectNats } from '@feedmill/event-log';
import type { FanoutCluster } from '../fanout-cluster.port.js';
import { JetStreamJobQueue } from './jetstream-job-queue.js';
import { KvPlannerElection } from './kv-planner-election.js';
import { NatsPlannerRequests } from './nats-planner-requests.js';

export interface FanoutClusterOptions {
  /** @defaultValue `nats://127.0.0.1:4222` */
  servers?: string | string[];
  /** The log's JetStream stream name: the jobs, the lease and the requests are kept apart per log. */
  logStream: string;
  /**
   * How long a worker holds a chunk job without renewing it before the job goes to another
   * worker: how long a dead worker's job waits. @defaultValue 5,000 ms
   */
  jobLeaseMs?: number;
  /**
   * How long the planner's lease lasts unless renewed: how long fan-out waits for a new
   * planner after one dies. @defaultValue 3,000 ms
   */
  plannerLeaseMs?: number;
  /** Without a word from the workers, how often the planner looks whether a post's jobs are done. @defaultValue 100 ms */
  jobPollMs?: number;
  /** @defaultValue console.warn */
  warn?: (message: string) => void;
}

/** Opens the work queue, the election and the planner's requests on one NATS connection of their own. */
export async function connectFanoutCluster(options: FanoutClusterOptions): Promise<FanoutCluster> {
  const nc: NatsConnection = await connectNats({ servers: options.servers ?? 'nats://127.0.0.1:4222' });
  const warn = options.warn ?? ((message: string) => console.warn(message));
  try {
    const jobs = await JetStreamJobQueue.open(nc, { logStream: options.logStream, leaseMs: options.jobLeaseMs ?? 5_000, pollMs: options.jobPollMs, warn });
    const election = await KvPlannerElection.open(nc, { logStream: options.logStream, leaseMs: options.plannerLeaseMs ?? 3_000, warn });
    return { jobs, election, plannerRequests: new NatsPlannerRequests(nc, options.logStream), close: () => closeNats(nc) };
  } catch (error) {
    await nc.close();
    throw error;
  }
}
