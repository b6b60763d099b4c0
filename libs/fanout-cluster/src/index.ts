export { FANOUT_CLUSTER } from './fanout-cluster.port.js';
export type { FanoutCluster, FanoutJobQueue, JobDelivery, JobWorker, PlannerElection, PlannerRecord, PlannerRequests } from './fanout-cluster.port.js';
export { connectFanoutCluster } from './jetstream/connect-fanout-cluster.js';
export type { FanoutClusterOptions } from './jetstream/connect-fanout-cluster.js';
