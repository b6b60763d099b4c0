export { runProjection } from './projection-runner.js';
export type { RunningProjection } from './projection-runner.js';
export { ProjectionWriter } from './projection-writer.js';
export type { RevisionedProjection, QueuedAppend } from './projection-writer.js';
export { ProjectionHost } from './projection-host.js';
export type { ProjectionLogger } from './projection-host.js';
