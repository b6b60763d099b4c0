export { FanoutModule } from './fanout.module.js';
export { FanoutService, FANOUT_RETRY_POLICY } from './fanout.service.js';
export type { FanoutRetryPolicy } from './fanout.service.js';
