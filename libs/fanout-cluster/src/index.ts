export { FANOUT_CLUSTER, JobsStalledError } from './fanout-cluster.port.js';
export type { FanoutCluster, FanoutJobQueue, JobDelivery, JobWorker, PlannerElection, PlannerRecord, PlannerRequests } from './fanout-cluster.port.js';
export { connectFanoutCluster } from './jetstream/connect-fanout-cluster.js';
export type { FanoutClusterOptions } from './jetstream/connect-fanout-cluster.js';
export { inspectFanoutCluster } from './jetstream/inspect-fanout-cluster.js';
export type { FanoutClusterView } from './jetstream/inspect-fanout-cluster.js';
export { KvLease, KvLeaseBoard, connectTimelinePartitionLeases } from './jetstream/kv-lease.js';
export type { LeaseRenewal } from './jetstream/kv-lease.js';
