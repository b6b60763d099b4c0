export { errorCodes, FeedmillError, isTransientFailure } from './errors.js';
export type { ErrorBody, ErrorCode } from './errors.js';
export { ID_CHARACTERS, GROUP_CHARACTERS, ID_PATTERN, GROUP_PATTERN, idSchema, groupSchema, feedIdSchema, isFeedId, feedId, feedGroup, feedOwner } from './feeds.js';
export type { FeedId } from './feeds.js';
export { feedConfigSchema, groupConfigSchema, defaultFeedConfig, timelineModels, MAX_CAP, MAX_SINGLE_DOCUMENT_CAP, aggregateFields, aggregateRuleSchema, DEFAULT_NOTIFICATION_RULE } from './feed-config.js';
export type { FeedConfig, GroupConfig, TimelineGroupConfig, TimelineModel, AggregateField, AggregateRule } from './feed-config.js';
export { newActivitySchema, activityChangesSchema, activitySchema, isoTimeSchema, referenceTo, isReference, isAddressedTo, approximateBytes, MAX_TARGETS, MAX_REFS, refSchema } from './activity.js';
export type { Activity, NewActivity, ActivityChanges, ActivityReference, TimelineItem } from './activity.js';
export { sortKeyOf, relevanceKeyOf, keyOfOrder, justAbove, encodeCursor, decodeCursor } from './sort-key.js';
export type { SortKey, KeyOf } from './sort-key.js';
export { feedEvents, decodeFeedEvents, eventItems, activityStream, followStream, settingsStream, marksStream, hiddenStream, activitiesImportStream, followsImportStream } from './events.js';
export {
  MAX_FOLLOWS_PER_REQUEST,
  MAX_ACTIVITIES_PER_REQUEST,
  MAX_BATCH_BYTES,
  jsonBytes,
  followBatchBytes,
  batchEventBytes,
  assertBatchFits,
} from './batch-limits.js';
export type { PositionedEvent } from './events.js';
export { eventCodec, UnknownEventVersionError, MalformedEventError } from './event-codec.js';
export type { EventCodec, EventDefinition, EncodedEvent, StoredEvent } from './event-codec.js';
export type {
  FeedEvent,
  FeedEventType,
  FeedLogEvent,
  FeedBatchEvent,
  ActivityAdded,
  ActivityRemoved,
  ActivityBumped,
  ActivityUpdated,
  FeedFollowed,
  FeedUnfollowed,
  FollowRequested,
  FollowRequestRejected,
  FeedSettingsChanged,
  NotificationsMarked,
  ActivityHidden,
  ActivityShown,
  FeedErased,
  ContentErased,
  ActivitiesAdded,
  FeedsFollowed,
} from './events.js';
export { subjects, wire } from './wire.js';
export { edgeBoundSchema, isWithinBound, boundsByFeed } from './edge-bounds.js';
export type { EdgeBound } from './edge-bounds.js';
export type { Subject, RequestOf, ReplyOf } from './wire.js';
export {
  pageLimitSchema,
  addActivityRequestSchema,
  addActivitiesRequestSchema,
  removeActivityRequestSchema,
  removeActivityReplySchema,
  eraseFeedRequestSchema,
  eraseFeedReplySchema,
  bumpActivityRequestSchema,
  bumpBodySchema,
  updateActivityRequestSchema,
  getActivitiesRequestSchema,
  activityPositionsReplySchema,
  recentActivitiesRequestSchema,
  recentEachRequestSchema,
  sliceRequestSchema,
  recentEachReplySchema,
  followRequestSchema,
  followManyRequestSchema,
  followManyReplySchema,
  followStateSchema,
  feedSettingsSchema,
  putSettingsRequestSchema,
  edgePageRequestSchema,
  edgeBoundsRequestSchema,
  edgeBoundsReplySchema,
  countsRequestSchema,
  readTimelineRequestSchema,
  groupCursorSchema,
  readGroupsRequestSchema,
  activityGroupSchema,
  groupPageSchema,
  markBodySchema,
  markRequestSchema,
  markReplySchema,
  hideRequestSchema,
  hideReplySchema,
  hiddenPageRequestSchema,
  hiddenEntrySchema,
  hiddenPageSchema,
  activityPageSchema,
  writtenActivityPageSchema,
  edgePageSchema,
  followCountsSchema,
  timelineDeliverySchema,
  deliverRequestSchema,
  deliverReplySchema,
  noParametersSchema,
  serviceStatusSchema,
  rebuildStatusSchema,
} from './messages.js';
export type {
  AddActivityRequest,
  AddActivitiesRequest,
  RemoveActivityRequest,
  RemoveActivityReply,
  EraseFeedRequest,
  EraseFeedReply,
  BumpActivityRequest,
  UpdateActivityRequest,
  GetActivitiesRequest,
  ActivityPositionsReply,
  RecentActivitiesRequest,
  RecentEachRequest,
  SliceRequest,
  RecentEachReply,
  ActivityPage,
  WrittenActivityPage,
  FollowRequest,
  FollowManyRequest,
  FollowManyReply,
  FollowState,
  FeedSettings,
  PutSettingsRequest,
  EdgePageRequest,
  EdgePage,
  EdgeBoundsReply,
  FollowCounts,
  ReadTimelineRequest,
  ReadGroupsRequest,
  ActivityGroupItem,
  GroupPage,
  MarkBody,
  MarkRequest,
  MarkReply,
  HideRequest,
  HideReply,
  HiddenPageRequest,
  HiddenEntry,
  HiddenPage,
  TimelineDelivery,
  DeliverRequest,
  DeliverReply,
  NoParameters,
  ServiceStatus,
  RebuildStatus,
  TimelineOrder,
} from './messages.js';
export { DEAD_LETTER_STREAM, deadLetterEvents, openDeadLetters, deadLetterListSchema, deadLetterReplaySchema } from './dead-letters.js';
export type { DeadLetter, DeadLetterEvent, DeadLetterList, DeadLetterReplay, ReaderDeadLetter } from './dead-letters.js';
export {
  MAX_TIMELINE_PARTITIONS,
  timelinePartitionOf,
  partitionedSubjects,
  partitionSubject,
  partitionOfDeliveries,
  splitDeliveriesByPartition,
  TimelinePartitioning,
  staticPartitionsOf,
} from './timeline-partitions.js';
export type { PartitionedSubject } from './timeline-partitions.js';
export { streamEventSchema, watchRequestSchema, watchReplySchema, renewWatchesRequestSchema, unwatchRequestSchema, realtimeSubject } from './realtime.js';
export type { StreamEvent, StreamEventType, WatchRequest, WatchReply } from './realtime.js';
