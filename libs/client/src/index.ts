export { FeedmillClient } from './feedmill-client.js';
export type { ActivityPage, GroupPage, HiddenPage, HiddenState, MarkCounts, FeedPage, FollowOptions, FollowResult, ImportedActivity, PageOptions, Readiness, UnfollowOptions } from './feedmill-client.js';
export { FeedmillApiError } from './errors.js';
export type { ApiErrorBody } from './errors.js';
export type { ApiRequest, ApiResponse, FeedmillClientOptions, Query, TokenProvider } from './transport.js';
export type { Page } from './pages.js';
