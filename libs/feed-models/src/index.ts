export {
  decideActivity,
  decideAddActivities,
  evolveActivity,
  activityIdOf,
  foreignIdKey,
  activityEventTypes,
  isActivityEvent,
} from './aggregates/activity.js';
export type { ActivityCommand, AddActivitiesCommand, ActivityEvent } from './aggregates/activity.js';
export {
  decideFollowEdge,
  decideFollowMany,
  decideFeedSettings,
  evolveFollowEdge,
  followEdgeEventTypes,
  graphEventConcerns,
  graphEventTypes,
  graphPartlyReadEventTypes,
  isFollowEdgeEvent,
  isFollowRequestEvent,
} from './aggregates/follow-edge.js';
export type { FollowEdgeCommand, FollowManyCommand, FollowEdgeEvent, FollowRequestEvent, EdgeState } from './aggregates/follow-edge.js';
export { streamOf } from './aggregates/streams.js';
export { planDeliveries, replanAsOfNow } from './fanout/delivery-plan.js';
export type { LastHiding } from './fanout/delivery-plan.js';
export { deliveriesByReader } from './fanout/deliveries-by-reader.js';
export type { PlanLookups } from './fanout/delivery-plan.js';
export { FollowerIndex, followerIndexEventTypes } from './fanout/follower-index.js';
export type { FollowersInBatch, FollowerIndexState } from './fanout/follower-index.js';
export { chunkDeliveries, MAX_READERS_PER_DELIVERY, DELIVERY_BUDGET_BYTES, IN_PROCESS_DELIVERY_BUDGET_BYTES } from './fanout/delivery-chunks.js';
export { deliverInOrder, fanOutBatch } from './fanout/fan-out-batch.js';
export { segmentAroundLargeFanOuts, isLargeDelivery, deliveryJobs } from './fanout/large-fan-outs.js';
export type { FanOutSegment, ReadersDelivery } from './fanout/large-fan-outs.js';
export { cutAtPartitionPositions } from './fanout/partition-cuts.js';
export type { DeliveryTarget } from './fanout/fan-out-batch.js';
export { ActivityTable, NO_HANDLE } from './activity-table.js';
export { IdIndex, NOT_INDEXED } from './id-index.js';
export type { ActivityHandle, TimelineOrder, CompactedActivityTable } from './activity-table.js';
export { CompactTimeline, EntryCount } from './compact-timeline.js';
export { readTimelinePage } from './timeline-read.js';
export type { TimelinePage, PullPath, PullScope, StoredTimeline } from './timeline-read.js';
export { DecayedCount, ProducerPosts, shouldPush, PULLED_WHOLE } from './hybrid/push-or-pull.js';
export type { HybridPolicy, PulledEdges } from './hybrid/push-or-pull.js';
export { readHybridPage } from './hybrid/hybrid-read.js';
export { mergeNewestFirst, lowerBound } from './newest-first-merge.js';
export type { DescendingSource } from './newest-first-merge.js';
export { groupActivities, pageOfGroups, groupKeyOf, groupIdOf, windowStartOf, GROUP_SAMPLE_SIZE } from './aggregated/activity-groups.js';
export type { ActivityGroup, GroupCursor } from './aggregated/activity-groups.js';
export { NotificationMarks } from './aggregated/notification-marks.js';
export { HiddenActivities } from './hidden/hidden-activities.js';
export type { HiddenMark } from './hidden/hidden-activities.js';
export type { MarkChange, MarkKind, MarkState } from './aggregated/notification-marks.js';
export { newerThan, newestKeyOf } from './newer-than.js';
export type { NewerPage } from './newer-than.js';
export { firstPageChanges } from './realtime/first-page-changes.js';
export type { FirstPageChange } from './realtime/first-page-changes.js';
export { groupPageChanges } from './realtime/group-page-changes.js';
export type { GroupPageChange, PlacedGroup } from './realtime/group-page-changes.js';
export { StreamRing } from './realtime/stream-ring.js';
export type { NumberedEvent } from './realtime/stream-ring.js';
