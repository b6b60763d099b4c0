import { describeContentStoreContract } from '../contract/content-store.contract.js';
import { describeGraphStoreContract } from '../contract/graph-store.contract.js';
import { describeTimelineStoreContract } from '../contract/timeline-store.contract.js';
import { MemoryContentStore } from './memory-content-store.js';
import { MemoryGraphStore } from './memory-graph-store.js';
import { MemoryTimelineStore } from './memory-timeline-store.js';

describeContentStoreContract('memory', async () => new MemoryContentStore());
describeGraphStoreContract('memory', async () => new MemoryGraphStore());
describeTimelineStoreContract('memory', async (policyOf, now) => new MemoryTimelineStore(policyOf, now));
