export { decideAddActivity, decideRemoveActivity, decideBumpActivity, decideFollow, decideUnfollow } from './deciders.js';
export type { AddActivityCommand, AddActivityDecision, FollowCommand } from './deciders.js';
export { CappedCache } from './capped-cache.js';
export type { TimelineEntry } from './capped-cache.js';
export { readTimelinePage, storedCache } from './timeline-read.js';
export type { TimelinePage, PullPath, StoredTimeline } from './timeline-read.js';
export { mergeNewestFirst, lowerBound } from './newest-first-merge.js';
export type { DescendingSource } from './newest-first-merge.js';
