export { Workload } from './workload.js';
export { profiles } from './profiles.js';
export type { Profile } from './profiles.js';
export type { BenchResults } from './report.js';
