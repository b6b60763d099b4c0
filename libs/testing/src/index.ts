export { referenceTimelines } from './reference-timelines.js';
export { describeFeedScenarios, SCENARIO_CAP } from './feed-scenarios.js';
export { describePublicApi, RATE_LIMIT } from './public-api-scenarios.js';
export { ErasureMarker, ERASURE_FEED_CONFIG, postMarkedActivities, apiAnswers, erasedFeedInLog } from './erasure-proof.js';
