export { describeEventLogContract } from './contract/event-log.contract.js';
export type { EventLogContractFactory } from './contract/event-log.contract.js';
