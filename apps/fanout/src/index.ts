export { FanoutModule } from './fanout.module.js';
export { FanoutService, FANOUT_RETRY_POLICY } from './fanout.service.js';
export type { FanoutRetryPolicy } from './fanout.service.js';
export { chunkDeliveries } from './delivery-chunks.js';
export { planDeliveries } from './delivery-plan.js';
export type { PlanLookups } from './delivery-plan.js';
export { servicePlanLookups } from './plan-lookups.js';
