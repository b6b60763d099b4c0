import { readFileSync } from 'node:fs';
import { defaultFeedConfig, feedConfigSchema, type FeedConfig } from '@feedmill/contracts';
import { ConfigError } from './runtime-config.js';

/** Reads and validates the feed-group config; errors name the file and the key. */
export function loadFeedConfig(path: string | undefined): FeedConfig {
  if (path === undefined) return defaultFeedConfig;
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new ConfigError(`FEED_CONFIG ${path}: cannot read it as JSON (${(error as Error).message})`);
  }
  const parsed = feedConfigSchema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`);
  throw new ConfigError(`FEED_CONFIG ${path}: ${problems.join('; ')}`);
}
