import { Body, Controller, Delete, Get, HttpCode, Inject, Logger, Param, Patch, Post, Put, Query, UseFilters } from '@nestjs/common';
import { z } from 'zod';
import {
  FeedmillError,
  TimelinePartitioning,
  activityChangesSchema,
  bumpBodySchema,
  markBodySchema,
  subjects,
  type Activity,
  type BumpActivityRequest,
  type FeedId,
  type FeedSettings,
  type FollowCounts,
  type FollowRequest,
  type FollowState,
  type HiddenEntry,
  type MarkReply,
  type RemoveActivityRequest,
  type UpdateActivityRequest,
} from '@feedmill/contracts';
import { FEED_GROUPS, FeedGroups } from '@feedmill/config';
import { TIMELINE_PARTITIONING } from '@feedmill/runtime';
import { parseInput, SERVICE_CLIENT, type ServiceClient } from '@feedmill/transport';
import { edgeCursor, hiddenCursor, parseNoQuery, parsePageQuery, resolveFeed, resolveId } from './feed-params.js';
import { HttpErrorFilter } from './http-errors.js';
import { RequestCaller } from './auth/authenticate.js';
import { requireOwner, type Caller } from './auth/caller.js';
import { FeedAccess } from './auth/feed-access.js';
import { parseKeepHistory } from './follow-options.js';

export const settingsBodySchema = z.strictObject({ private: z.boolean() });

/**
 * How long an unfollow or a follower's removal waits for the timelines to drop the feed's
 * entries, so that the reader's next page no longer shows them: fan-out takes milliseconds,
 * and past this the answer says nothing more than that the edge is gone.
 */
const TIMELINES_WAIT_MS = 5_000;

/**
 * The public feed API. It validates, stamps ids and times, and asks the services. Reading a
 * feed, posting and following are {@link HotRoutes}, on Fastify directly.
 */
@Controller('v1/feeds')
@UseFilters(HttpErrorFilter)
export class FeedsHttpController {
  private readonly logger = new Logger('feeds');

  constructor(
    @Inject(SERVICE_CLIENT) private readonly client: ServiceClient,
    @Inject(FEED_GROUPS) private readonly groups: FeedGroups,
    private readonly access: FeedAccess,
    @Inject(TIMELINE_PARTITIONING) private readonly partitioning: TimelinePartitioning,
  ) {}

  /**
   * 204: the feed is erased (`erase=true` is required: nothing else deletes a feed). Its
   * owner or an admin token only. Answers once the timelines and graph have applied the
   * erasure, so that no page, follower list or count read after shows anything of it; its
   * content in the log is unreadable by then.
   */
  @Delete(':group/:id')
  @HttpCode(204)
  async erase(@RequestCaller() caller: Caller, @Param('group') group: string, @Param('id') id: string, @Query('erase') erase: unknown): Promise<void> {
    const feed = resolveFeed(this.groups, group, id);
    if (erase !== 'true') {
      throw new FeedmillError('erase_required', `a feed is only ever erased, for good: send DELETE /v1/feeds/${group}/${id}?erase=true`, 'query.erase');
    }
    requireOwner(caller, feed, 'erase');
    const { position } = await this.client.request(subjects.content.erase, { feed, time: new Date().toISOString() });
    // The plain reach waits for every partition: the erased feed's entries may be in any
    // reader's timeline. Graph's counts as of the erasure wait for its follows to be gone.
    await Promise.all([
      this.client.request(subjects.timeline.reach, { position, timeoutMs: TIMELINES_WAIT_MS }),
      this.client.request(subjects.graph.counts, { feed, atLeast: position }),
    ]);
  }

  @Delete(':group/:id/activities/:activityId')
  @HttpCode(204)
  async remove(@RequestCaller() caller: Caller, @Param('group') group: string, @Param('id') id: string, @Param('activityId') activityId: string): Promise<void> {
    const feed = resolveFeed(this.groups, group, id, 'producer');
    requireOwner(caller, feed, 'remove activities of');
    const request: RemoveActivityRequest = { feed, id: resolveId(activityId, 'activityId'), time: new Date().toISOString() };
    await this.client.request(subjects.content.remove, request);
  }

  /** 200 with the activity as it now is; a bump no later than its relevance changes nothing. */
  @Post(':group/:id/activities/:activityId/bump')
  @HttpCode(200)
  bump(@RequestCaller() caller: Caller, @Param('group') group: string, @Param('id') id: string, @Param('activityId') activityId: string, @Body() body: unknown): Promise<Activity> {
    const feed = resolveFeed(this.groups, group, id, 'producer');
    requireOwner(caller, feed, 'bump activities of');
    // No body is a bump at the server's time; a body of `null` is not an object and is refused.
    const { time } = parseInput(bumpBodySchema, body === undefined ? {} : body, 'body');
    const request: BumpActivityRequest = { feed, id: resolveId(activityId, 'activityId'), time: time ?? new Date().toISOString() };
    return this.client.request(subjects.content.bump, request);
  }

  /**
   * 200 with the activity as it now is: its object and/or extra replaced, `updatedAt` set,
   * in the same place of every feed and timeline. An update that changes nothing records
   * nothing and answers the activity as it was.
   */
  @Patch(':group/:id/activities/:activityId')
  @HttpCode(200)
  update(@RequestCaller() caller: Caller, @Param('group') group: string, @Param('id') id: string, @Param('activityId') activityId: string, @Body() body: unknown): Promise<Activity> {
    const feed = resolveFeed(this.groups, group, id, 'producer');
    requireOwner(caller, feed, 'update activities of');
    const changes = parseInput(activityChangesSchema, body ?? {}, 'body');
    const request: UpdateActivityRequest = { feed, id: resolveId(activityId, 'activityId'), time: new Date().toISOString(), ...changes };
    return this.client.request(subjects.content.update, request);
  }

  /**
   * 200 with the reader's `unseen` and `unread` counts: the notification feed's groups named
   * by `ids` (or `all` of them) are seen from now, up to their newest activity; a group that
   * grows later is unseen again. Recorded in the log; only the feed's owner or an admin marks.
   */
  @Post(':group/:id/seen')
  @HttpCode(200)
  seen(@RequestCaller() caller: Caller, @Param('group') group: string, @Param('id') id: string, @Body() body: unknown): Promise<Omit<MarkReply, 'position'>> {
    return this.mark(caller, group, id, body, 'seen');
  }

  /** As {@link seen}, for read: a group read is seen too. */
  @Post(':group/:id/read')
  @HttpCode(200)
  read(@RequestCaller() caller: Caller, @Param('group') group: string, @Param('id') id: string, @Body() body: unknown): Promise<Omit<MarkReply, 'position'>> {
    return this.mark(caller, group, id, body, 'read');
  }

  private async mark(caller: Caller, group: string, id: string, body: unknown, mark: 'seen' | 'read'): Promise<Omit<MarkReply, 'position'>> {
    const feed = resolveFeed(this.groups, group, id);
    if (!this.groups.isNotificationFeed(feed)) throw new FeedmillError('invalid_request', `${group} feeds are not notification feeds: they keep no seen or read marks`, 'group');
    requireOwner(caller, feed, `mark ${mark}`);
    const marking = parseInput(markBodySchema, body ?? {}, 'body');
    const { unseen, unread } = await this.client.request(subjects.timeline.mark, { feed, mark, time: new Date().toISOString(), ...marking }, this.partitioning.routeOf(feed));
    return { unseen, unread };
  }

  /**
   * 200 `{ id, hidden: true }`: the activity is left out of every page of this reader's
   * timeline from the answer on, until it is shown again. Recorded in the log; hiding what is
   * hidden writes nothing. Only the timeline's owner or an admin hides; the activity must
   * exist (404 `activity_not_found`).
   */
  @Put(':group/:id/hidden/:activityId')
  @HttpCode(200)
  hide(@RequestCaller() caller: Caller, @Param('group') group: string, @Param('id') id: string, @Param('activityId') activityId: string): Promise<{ id: string; hidden: boolean }> {
    return this.setHidden(caller, group, id, activityId, true);
  }

  /** As {@link hide}, showing the activity again; showing what is not hidden writes nothing. */
  @Delete(':group/:id/hidden/:activityId')
  @HttpCode(200)
  show(@RequestCaller() caller: Caller, @Param('group') group: string, @Param('id') id: string, @Param('activityId') activityId: string): Promise<{ id: string; hidden: boolean }> {
    return this.setHidden(caller, group, id, activityId, false);
  }

  /** 200 with a page of the ids the reader hid, newest hiding first, and a cursor. Only the owner or an admin lists them. */
  @Get(':group/:id/hidden')
  async hiddenList(@RequestCaller() caller: Caller, @Param('group') group: string, @Param('id') id: string, @Query() query: unknown): Promise<{ items: HiddenEntry[]; next: string | null }> {
    const feed = this.hidingTimeline(group, id);
    requireOwner(caller, feed, 'list what is hidden in');
    const { limit, cursor } = parsePageQuery(query);
    const page = await this.client.request(subjects.timeline.hidden, { feed, limit, after: hiddenCursor.decode(cursor) }, this.partitioning.routeOf(feed));
    return { items: page.items, next: hiddenCursor.encode(page.next) };
  }

  private async setHidden(caller: Caller, group: string, id: string, activityId: string, hidden: boolean): Promise<{ id: string; hidden: boolean }> {
    const feed = this.hidingTimeline(group, id);
    requireOwner(caller, feed, hidden ? 'hide activities in' : 'show activities in');
    const request = { feed, id: resolveId(activityId, 'activityId'), hidden, time: new Date().toISOString() };
    const reply = await this.client.request(subjects.timeline.hide, request, this.partitioning.routeOf(feed));
    return { id: reply.id, hidden: reply.hidden };
  }

  /** A reader's timeline: only timelines hide activities (a producer feed is refused, naming the group). */
  private hidingTimeline(group: string, id: string): FeedId {
    const feed = resolveFeed(this.groups, group, id);
    if (!this.groups.isTimeline(feed)) throw new FeedmillError('invalid_request', `${group} feeds are producer feeds: only a reader's timeline hides activities`, 'group');
    return feed;
  }

  @Delete(':group/:id/follows/:targetGroup/:targetId')
  @HttpCode(204)
  async unfollow(@RequestCaller() caller: Caller, @Param() params: Record<string, string>, @Query() query: unknown): Promise<void> {
    const request = this.followRequest(params);
    requireOwner(caller, request.follower, 'unfollow from');
    const keepHistory = parseKeepHistory(query);
    await this.timelinesReach(request.follower, await this.client.request(subjects.graph.unfollow, keepHistory ? { ...request, keepHistory } : request));
  }

  /** The owner of a feed turns it private (new follows wait for approval) or public. */
  @Put(':group/:id/settings')
  putSettings(@RequestCaller() caller: Caller, @Param('group') group: string, @Param('id') id: string, @Body() body: unknown): Promise<FeedSettings> {
    const feed = resolveFeed(this.groups, group, id, 'producer');
    requireOwner(caller, feed, 'change the settings of');
    const settings = parseInput(settingsBodySchema, body ?? {}, 'body');
    return this.client.request(subjects.graph.putSettings, { feed, private: settings.private, time: new Date().toISOString() });
  }

  @Get(':group/:id/settings')
  async settings(@RequestCaller() caller: Caller, @Param('group') group: string, @Param('id') id: string, @Query() query: unknown): Promise<FeedSettings> {
    const feed = resolveFeed(this.groups, group, id);
    parseNoQuery(query);
    if (this.groups.kindOf(group) !== 'producer') throw new FeedmillError('not_found', `${group} feeds are timelines, which have no settings: only producer feeds do`, 'group');
    await this.access.requireReader(caller, feed);
    return this.client.request(subjects.graph.settings, { feed });
  }

  /** The follows waiting for the owner's approval. */
  @Get(':group/:id/follow-requests')
  async followRequests(@RequestCaller() caller: Caller, @Param('group') group: string, @Param('id') id: string, @Query() query: unknown) {
    const feed = resolveFeed(this.groups, group, id, 'producer');
    requireOwner(caller, feed, 'see the follow requests of');
    return this.edgePage(subjects.graph.requests, feed, query);
  }

  /** 204: the request is a follow, and the follower's timeline gets the feed's history. */
  @Post(':group/:id/follow-requests/:followerGroup/:followerId')
  @HttpCode(204)
  async approve(@RequestCaller() caller: Caller, @Param() params: Record<string, string>): Promise<void> {
    await this.client.request(subjects.graph.approve, this.ownersRequest(caller, params, 'approve follows of'));
  }

  @Delete(':group/:id/follow-requests/:followerGroup/:followerId')
  @HttpCode(204)
  async reject(@RequestCaller() caller: Caller, @Param() params: Record<string, string>): Promise<void> {
    await this.client.request(subjects.graph.reject, this.ownersRequest(caller, params, 'reject follows of'));
  }

  /** 204: the follower (or its request) is gone, and so are the feed's entries from its timeline. */
  @Delete(':group/:id/followers/:followerGroup/:followerId')
  @HttpCode(204)
  async removeFollower(@RequestCaller() caller: Caller, @Param() params: Record<string, string>): Promise<void> {
    const request = this.ownersRequest(caller, params, 'remove followers of');
    await this.timelinesReach(request.follower, await this.client.request(subjects.graph.removeFollower, request));
  }

  @Get(':group/:id/followers')
  followers(@RequestCaller() caller: Caller, @Param('group') group: string, @Param('id') id: string, @Query() query: unknown) {
    return this.edges(caller, subjects.graph.followers, group, id, query);
  }

  @Get(':group/:id/following')
  following(@RequestCaller() caller: Caller, @Param('group') group: string, @Param('id') id: string, @Query() query: unknown) {
    return this.edges(caller, subjects.graph.following, group, id, query);
  }

  @Get(':group/:id/counts')
  async counts(@RequestCaller() caller: Caller, @Param('group') group: string, @Param('id') id: string, @Query() query: unknown): Promise<FollowCounts> {
    const feed = resolveFeed(this.groups, group, id);
    parseNoQuery(query);
    await this.access.requireReader(caller, feed);
    return this.client.request(subjects.graph.counts, { feed });
  }

  private async edges(caller: Caller, subject: typeof subjects.graph.followers | typeof subjects.graph.following, group: string, id: string, query: unknown) {
    const feed = resolveFeed(this.groups, group, id);
    await this.access.requireReader(caller, feed);
    return this.edgePage(subject, feed, query);
  }

  private async edgePage(subject: typeof subjects.graph.followers | typeof subjects.graph.following | typeof subjects.graph.requests, feed: FeedId, query: unknown) {
    const { limit, cursor } = parsePageQuery(query);
    const page = await this.client.request(subject, { feed, limit, after: edgeCursor.decode(cursor) });
    return { items: page.items.map((item) => ({ feed: item })), next: edgeCursor.encode(page.next) };
  }

  /** A command of the target's owner about one follower: the feed is the path's, the follower its last two parts. */
  private ownersRequest(caller: Caller, params: Record<string, string>, action: string): FollowRequest {
    const target = resolveFeed(this.groups, params['group']!, params['id']!, 'producer');
    requireOwner(caller, target, action);
    const follower = resolveFeed(this.groups, params['followerGroup']!, params['followerId']!, 'timeline', { group: 'followerGroup', id: 'followerId' });
    return { follower, target, time: new Date().toISOString() };
  }

  /**
   * Waits until the follower's timeline (its partition) has applied a change to an edge (none
   * when nothing changed). The change is in the log by then: a partition that does not answer
   * (down, or restarting) applies it once back, and the answer says, as past the wait, only
   * that the edge is gone. A 503 would tell the caller that nothing was written.
   */
  private async timelinesReach(follower: FeedId, { position }: FollowState): Promise<void> {
    if (position === 0) return;
    try {
      await this.client.request(subjects.timeline.reach, { position, timeoutMs: TIMELINES_WAIT_MS }, this.partitioning.routeOf(follower));
    } catch (error) {
      if (!(error instanceof FeedmillError && error.code === 'unavailable')) throw error;
      this.logger.warn(`${follower}'s timelines did not answer for an edge change at position ${position}: ${error.message}`);
    }
  }

  private followRequest(params: Record<string, string>): FollowRequest {
    const follower = resolveFeed(this.groups, params['group']!, params['id']!, 'timeline');
    const target = resolveFeed(this.groups, params['targetGroup']!, params['targetId']!, 'producer', { group: 'targetGroup', id: 'targetId' });
    return { follower, target, time: new Date().toISOString() };
  }
}
