export { loadRuntimeConfig, runtimeConfigSchema, ConfigError } from './runtime-config.js';
export type { RuntimeConfig } from './runtime-config.js';
export { loadFeedConfig } from './feed-config-file.js';
export { FeedGroups, FEED_GROUPS } from './feed-groups.js';
