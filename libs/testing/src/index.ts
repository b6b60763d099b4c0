export { freePort } from './free-port.js';
export { startNatsServer, findNatsServer } from './nats-server.js';
export type { NatsServerHandle } from './nats-server.js';
export { waitFor } from './wait-for.js';
