export { freePort } from './free-port.js';
export { startNatsServer, findNatsServer } from './nats-server.js';
export type { NatsServerHandle } from './nats-server.js';
export { waitFor } from './wait-for.js';
export { repoRoot, startApp, startStandalone, startCluster, waitUntilReady } from './processes.js';
export type { RunningProcess, Deployment } from './processes.js';
export { FeedClient } from './feed-client.js';
export type { HttpResult } from './feed-client.js';
export { readAllEvents, waitUntilSettled } from './log-reader.js';
