export { describeEventLogContract } from './contract/event-log.contract.js';
export type { EventLogContractFactory } from './contract/event-log.contract.js';
export { smallDisk } from './file/faults/small-disk.js';
export type { SmallDisk } from './file/faults/small-disk.js';
export { sharedKeyStore } from './sealing/shared-key-store.js';
