export { referenceTimelines } from './reference-timelines.js';
export { describeFeedScenarios, SCENARIO_CAP } from './feed-scenarios.js';
export { describePublicApi, RATE_LIMIT } from './public-api-scenarios.js';
export { operationsOf } from './faults/openapi-operations.js';
export type { ApiOperation } from './faults/openapi-operations.js';
export { malformedRequests } from './faults/malformed-requests.js';
export type { MalformedRequest, MalformedRequestContext } from './faults/malformed-requests.js';
