export { describeContentStoreContract } from './contract/content-store.contract.js';
export { describeGraphStoreContract } from './contract/graph-store.contract.js';
export { describeTimelineStoreContract } from './contract/timeline-store.contract.js';
export type { TimelineStoreFactory } from './contract/timeline-store.contract.js';
export { recordEvents } from './contract/recorded.js';
export { MingoCollection } from './contract/mingo-collection.js';
