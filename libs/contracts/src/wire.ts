import { z } from 'zod';
import { activitySchema } from './activity.js';
import { deadLetterListSchema, deadLetterReplaySchema } from './dead-letters.js';
import { activityListCheck, activityPageCheck, edgePageCheck, recentEachReplyCheck } from './large-reply-checks.js';
import {
  groupPageSchema,
  markReplySchema,
  markRequestSchema,
  hideRequestSchema,
  hideReplySchema,
  hiddenPageRequestSchema,
  hiddenPageSchema,
  readGroupsRequestSchema,
  activityPageSchema,
  writtenActivityPageSchema,
  addActivitiesRequestSchema,
  addActivityRequestSchema,
  bumpActivityRequestSchema,
  updateActivityRequestSchema,
  countsRequestSchema,
  deliverReplySchema,
  deliverRequestSchema,
  edgePageRequestSchema,
  edgePageSchema,
  edgeBoundsRequestSchema,
  edgeBoundsReplySchema,
  followCountsSchema,
  followManyReplySchema,
  followManyRequestSchema,
  followRequestSchema,
  followStateSchema,
  feedRequestSchema,
  feedSettingsSchema,
  putSettingsRequestSchema,
  mayReadRequestSchema,
  mayReadReplySchema,
  reachRequestSchema,
  reachReplySchema,
  getActivitiesRequestSchema,
  activityPositionsReplySchema,
  noParametersSchema,
  readTimelineRequestSchema,
  rebuildStatusSchema,
  recentActivitiesRequestSchema,
  recentEachReplySchema,
  recentEachRequestSchema,
  removeActivityReplySchema,
  removeActivityRequestSchema,
  eraseFeedRequestSchema,
  eraseFeedReplySchema,
  serviceStatusSchema,
  sliceRequestSchema,
} from './messages.js';
import { renewWatchesReplySchema, renewWatchesRequestSchema, unwatchReplySchema, unwatchRequestSchema, watchReplySchema, watchRequestSchema } from './realtime.js';

/** NATS subjects of every request/reply between the services; {@link wire} says what each carries. */
export const subjects = {
  content: {
    add: 'feed.content.add',
    addMany: 'feed.content.add-many',
    remove: 'feed.content.remove',
    erase: 'feed.content.erase',
    bump: 'feed.content.bump',
    update: 'feed.content.update',
    get: 'feed.content.get',
    positions: 'feed.content.positions',
    recent: 'feed.content.recent',
    recentEach: 'feed.content.recent-each',
    slice: 'feed.content.slice',
    status: 'feed.content.status',
  },
  graph: {
    follow: 'feed.graph.follow',
    followMany: 'feed.graph.follow-many',
    unfollow: 'feed.graph.unfollow',
    approve: 'feed.graph.approve',
    reject: 'feed.graph.reject',
    removeFollower: 'feed.graph.remove-follower',
    requests: 'feed.graph.requests',
    settings: 'feed.graph.settings',
    putSettings: 'feed.graph.put-settings',
    mayRead: 'feed.graph.may-read',
    followers: 'feed.graph.followers',
    following: 'feed.graph.following',
    edgeBounds: 'feed.graph.edge-bounds',
    counts: 'feed.graph.counts',
    status: 'feed.graph.status',
  },
  timeline: {
    read: 'feed.timeline.read',
    /** `read`, answered with the page written as JSON (see `writtenActivityPageSchema`): what the gateway asks over NATS. */
    readWritten: 'feed.timeline.read-written',
    readGroups: 'feed.timeline.read-groups',
    mark: 'feed.timeline.mark',
    hide: 'feed.timeline.hide',
    hidden: 'feed.timeline.hidden',
    deliver: 'feed.timeline.deliver',
    reach: 'feed.timeline.reach',
    status: 'feed.timeline.status',
    rebuild: 'feed.timeline.rebuild',
    rebuildStatus: 'feed.timeline.rebuild-status',
    watch: 'feed.timeline.watch',
    renewWatches: 'feed.timeline.renew-watches',
    unwatch: 'feed.timeline.unwatch',
  },
  fanout: {
    status: 'feed.fanout.status',
    deadLetters: 'feed.fanout.dead-letters',
    replayDeadLetters: 'feed.fanout.replay-dead-letters',
  },
} as const;

type SubjectGroups = typeof subjects;
type SubjectName = { [Group in keyof SubjectGroups]: SubjectGroups[Group][keyof SubjectGroups[Group]] }[keyof SubjectGroups];

/** One request/reply exchange on a subject. */
export interface Exchange<Request extends z.ZodType = z.ZodType, Reply extends z.ZodType = z.ZodType> {
  /** What the caller sends; the answering controller validates it. */
  request: Request;
  /** What comes back: the reply's type, and its full definition. */
  reply: Reply;
  /** What the caller checks of each reply it receives: `reply` itself, or a lighter check of a large one. */
  replyCheck: z.ZodType;
}

function exchange<Request extends z.ZodType, Reply extends z.ZodType>(request: Request, reply: Reply, replyCheck: z.ZodType = reply): Exchange<Request, Reply> {
  return { request, reply, replyCheck };
}

/**
 * Every subject with its request and its reply: the one table callers and controllers take
 * their types from. `satisfies` keeps it and {@link subjects} the same set of names.
 */
export const wire = {
  [subjects.content.add]: exchange(addActivityRequestSchema, activitySchema),
  [subjects.content.addMany]: exchange(addActivitiesRequestSchema, z.array(activitySchema), activityListCheck),
  [subjects.content.remove]: exchange(removeActivityRequestSchema, removeActivityReplySchema),
  [subjects.content.erase]: exchange(eraseFeedRequestSchema, eraseFeedReplySchema),
  [subjects.content.bump]: exchange(bumpActivityRequestSchema, activitySchema),
  [subjects.content.update]: exchange(updateActivityRequestSchema, activitySchema),
  [subjects.content.get]: exchange(getActivitiesRequestSchema, z.array(activitySchema), activityListCheck),
  [subjects.content.positions]: exchange(getActivitiesRequestSchema, activityPositionsReplySchema),
  [subjects.content.recent]: exchange(recentActivitiesRequestSchema, activityPageSchema, activityPageCheck),
  [subjects.content.recentEach]: exchange(recentEachRequestSchema, recentEachReplySchema, recentEachReplyCheck),
  [subjects.content.slice]: exchange(sliceRequestSchema, activityPageSchema, activityPageCheck),
  [subjects.content.status]: exchange(noParametersSchema, serviceStatusSchema),
  [subjects.graph.follow]: exchange(followRequestSchema, followStateSchema),
  [subjects.graph.followMany]: exchange(followManyRequestSchema, followManyReplySchema),
  [subjects.graph.unfollow]: exchange(followRequestSchema, followStateSchema),
  [subjects.graph.approve]: exchange(followRequestSchema, followStateSchema),
  [subjects.graph.reject]: exchange(followRequestSchema, followStateSchema),
  [subjects.graph.removeFollower]: exchange(followRequestSchema, followStateSchema),
  [subjects.graph.requests]: exchange(edgePageRequestSchema, edgePageSchema, edgePageCheck),
  [subjects.graph.settings]: exchange(feedRequestSchema, feedSettingsSchema),
  [subjects.graph.putSettings]: exchange(putSettingsRequestSchema, feedSettingsSchema),
  [subjects.graph.mayRead]: exchange(mayReadRequestSchema, mayReadReplySchema),
  [subjects.graph.followers]: exchange(edgePageRequestSchema, edgePageSchema, edgePageCheck),
  [subjects.graph.following]: exchange(edgePageRequestSchema, edgePageSchema, edgePageCheck),
  [subjects.graph.edgeBounds]: exchange(edgeBoundsRequestSchema, edgeBoundsReplySchema),
  [subjects.graph.counts]: exchange(countsRequestSchema, followCountsSchema),
  [subjects.graph.status]: exchange(noParametersSchema, serviceStatusSchema),
  [subjects.timeline.read]: exchange(readTimelineRequestSchema, activityPageSchema, activityPageCheck),
  [subjects.timeline.readWritten]: exchange(readTimelineRequestSchema, writtenActivityPageSchema),
  [subjects.timeline.readGroups]: exchange(readGroupsRequestSchema, groupPageSchema),
  [subjects.timeline.mark]: exchange(markRequestSchema, markReplySchema),
  [subjects.timeline.hide]: exchange(hideRequestSchema, hideReplySchema),
  [subjects.timeline.hidden]: exchange(hiddenPageRequestSchema, hiddenPageSchema),
  [subjects.timeline.deliver]: exchange(deliverRequestSchema, deliverReplySchema),
  [subjects.timeline.reach]: exchange(reachRequestSchema, reachReplySchema),
  [subjects.timeline.status]: exchange(noParametersSchema, serviceStatusSchema),
  [subjects.timeline.rebuild]: exchange(noParametersSchema, rebuildStatusSchema),
  [subjects.timeline.rebuildStatus]: exchange(noParametersSchema, rebuildStatusSchema),
  [subjects.timeline.watch]: exchange(watchRequestSchema, watchReplySchema),
  [subjects.timeline.renewWatches]: exchange(renewWatchesRequestSchema, renewWatchesReplySchema),
  [subjects.timeline.unwatch]: exchange(unwatchRequestSchema, unwatchReplySchema),
  [subjects.fanout.status]: exchange(noParametersSchema, serviceStatusSchema),
  [subjects.fanout.deadLetters]: exchange(noParametersSchema, deadLetterListSchema),
  [subjects.fanout.replayDeadLetters]: exchange(noParametersSchema, deadLetterReplaySchema),
} satisfies Record<SubjectName, Exchange>;

type Wire = typeof wire;

/** A subject of the wire, such as `feed.content.add`. */
export type Subject = keyof Wire;

/** What a request on subject `S` carries, as its controller has it once validated. */
export type RequestOf<S extends Subject> = z.output<Wire[S]['request']>;

/** What the answer to a request on subject `S` carries. */
export type ReplyOf<S extends Subject> = z.output<Wire[S]['reply']>;
