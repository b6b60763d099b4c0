export { CONTENT_STORE, GRAPH_STORE, TIMELINE_STORE } from './ports.js';
export type { Projection, ContentStore, GraphStore, TimelineStore, TimelinePolicy } from './ports.js';
export { ProjectionPosition } from './projection-position.js';
export { StreamRevisions } from './stream-revisions.js';
export { MemoryContentStore } from './memory/memory-content-store.js';
export { MemoryGraphStore } from './memory/memory-graph-store.js';
export { MemoryTimelineStore } from './memory/memory-timeline-store.js';
