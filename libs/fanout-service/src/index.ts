export { FanoutModule } from './fanout.module.js';
export { FanoutService, FANOUT_RETRY_POLICY, FANOUT_JOB_SETTINGS, defaultJobSettings } from './fanout.service.js';
export type { FanoutRetryPolicy, FanoutJobSettings } from './fanout.service.js';
