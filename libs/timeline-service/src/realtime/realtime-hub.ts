import { randomBytes } from 'node:crypto';
import { decodeFeedEvents, encodeCursor, type Activity, type ActivityPage, type FeedEvent, type FeedId, type KeyOf, type StreamEvent } from '@feedmill/contracts';
import type { EventLog, Subscription } from '@feedmill/event-log';
import { firstPageChanges, groupPageChanges, StreamRing, type FirstPageChange, type GroupPageChange } from '@feedmill/feed-models';
import type { RealtimeOptions } from '@feedmill/runtime';
import { activityJson, type RealtimeBus } from '@feedmill/transport';
import type { PlacedGroupItem, PlacedGroupPage } from '../aggregated-reads.js';

/** What the hub needs of the timeline service and the others. */
export interface RealtimeHubPorts {
  readonly options: RealtimeOptions;
  readonly bus: RealtimeBus;
  readonly log: EventLog;
  isTimeline(feed: FeedId): boolean;
  keyOf(feed: FeedId): KeyOf;
  /** The feed's first page as a read answers it, as of at least log position `atLeast`. */
  readFirstPage(feed: FeedId, limit: number, atLeast: number): Promise<ActivityPage>;
  /** Whether the feed is read as groups (an aggregated or notification feed). */
  isAggregated(feed: FeedId): boolean;
  /** An aggregated feed's first `limit` groups with their places, and its counts in a notification feed. */
  readFirstGroups(feed: FeedId, limit: number): Promise<PlacedGroupPage>;
  /** The position of the timeline store holding `feed`, or undefined when this process does not hold it. */
  timelinePosition(feed: FeedId): Promise<number | undefined>;
  /** Resolves once the store holding `feed` has applied `position`, or after `timeoutMs`. */
  timelineReaches(feed: FeedId, position: number, timeoutMs: number): Promise<void>;
  /** The producer feeds a timeline follows. */
  following(feed: FeedId): Promise<FeedId[]>;
  warn(message: string): void;
}

/** How long a change waits for the timelines to apply it before the page is read anyway. */
const REACH_TIMEOUT_MS = 5_000;

/** One feed's stream, followed while a gateway holds one open (tier 1) and for a grace period after (tier 2). */
interface FeedWatch {
  readonly feed: FeedId;
  ring: StreamRing<StreamEvent>;
  /** The first page as last read. */
  page: Activity[];
  /** An aggregated feed's first page as last read, instead of `page`. */
  groups: PlacedGroupPage | undefined;
  /** Gateways holding streams on it, and when each one's lease ends. */
  readonly leases: Map<string, number>;
  /** When its last lease ended: its grace period runs from then. */
  idleSince: number | undefined;
  /** Feeds whose activities change its first page: itself, and for a timeline the feeds it follows. */
  sources: readonly FeedId[];
  /** The first reading, which a watch's first reply waits for. */
  readonly ready: Promise<void>;
  /** Position a reading must still reflect, or -1 when none is due. */
  due: number;
  /** A reading is due whatever the position (a delivery applied without moving it). */
  forced: boolean;
  /** Who may read the feed may have changed: the next reading publishes even when the page did not change. */
  recheck: boolean;
  /** Whether the loop that reads it runs. */
  running: boolean;
  /** The timeline store's position when its last reading began: a change at or below it is in that reading. */
  readFrom: number;
  dropped: boolean;
}

/**
 * Realtime streams on the timeline side (seed 003's rivers): for each feed some gateway
 * streams, the first page as last read and a ring of numbered changes. A feed is followed
 * only while a stream is open on it (tier 1) and for `graceMs` after its last one closed
 * (tier 2), so that a client that reconnects soon resumes where it was. A change to the page
 * is known from the log (an activity of a feed it is made of, a follow of the reader) and
 * from deliveries; the page is then read again through the ordinary read path, once the
 * timelines stand past the change, and compared with the last reading, so that every
 * model, the pull model included, and every access check stream what a read would show.
 */
export class RealtimeHub {
  private readonly watches = new Map<FeedId, FeedWatch>();
  /** For each source feed, the watches it changes. */
  private readonly bySource = new Map<FeedId, Set<FeedWatch>>();
  private subscription: Subscription | undefined;
  private starting: Promise<void> | undefined;
  private readonly sweeper: ReturnType<typeof setInterval>;
  private published = 0;

  constructor(private readonly ports: RealtimeHubPorts) {
    const { leaseMs, graceMs } = ports.options;
    this.sweeper = setInterval(() => this.sweep(), Math.min(1_000, Math.max(20, Math.min(leaseMs, graceMs || leaseMs) / 4)));
    this.sweeper.unref();
  }

  /**
   * A gateway opens a stream on `feed`: its lease starts (or is renewed) and the answer is
   * what the stream starts with, the events after `lastEventId` while the ring still holds
   * them, else a `reset` with the page as it is now.
   */
  async watch(feed: FeedId, watcher: string, lastEventId: string | undefined): Promise<StreamEvent[]> {
    await this.following();
    const watch = this.watchOf(feed);
    this.lease(watch, watcher);
    await watch.ready;
    const missed = lastEventId === undefined ? undefined : watch.ring.after(lastEventId);
    if (missed) return missed.map((numbered) => numbered.event);
    return [this.resetOf(watch)];
  }

  /** The page as it is now, as of the ring's last event. */
  private resetOf(watch: FeedWatch): StreamEvent {
    if (this.ports.isAggregated(watch.feed)) {
      const { groups = [], ...counts } = watch.groups ?? {};
      return { id: watch.ring.lastId, type: 'reset', data: { groups: groups.map(unplaced), ...counts } };
    }
    const keyOf = this.ports.keyOf(watch.feed);
    return { id: watch.ring.lastId, type: 'reset', data: { items: watch.page, newest: watch.page.length === 0 ? null : encodeCursor(keyOf(watch.page[0]!)) } };
  }

  /**
   * A gateway still streams these feeds. A feed not watched here (this process started
   * since, or the feed's partition moved here) is watched again, and its first reading is
   * published as a `reset` from the new ring: the gateway's streams go on from it.
   */
  async renew(feeds: readonly FeedId[], watcher: string): Promise<number> {
    await this.following();
    for (const feed of feeds) {
      const known = this.watches.has(feed);
      const watch = this.watchOf(feed);
      this.lease(watch, watcher);
      if (!known) {
        void watch.ready
          .then(() => !watch.dropped && this.ports.bus.publish(feed, [this.resetOf(watch)]))
          .catch((error: unknown) => this.ports.warn(`stream of ${feed}: reset not published: ${describe(error)}`));
      }
    }
    return feeds.length;
  }

  /** A gateway's last stream on `feed` closed: its grace period starts now, unless another gateway streams it. */
  unwatch(feed: FeedId, watcher: string): void {
    const watch = this.watches.get(feed);
    if (!watch) return;
    watch.leases.delete(watcher);
    this.settle(watch, Date.now());
  }

  /** Readers a delivery changed: their pages are read again, whatever the position says (a job moves none). */
  delivered(readers: Iterable<FeedId>, position: number): void {
    if (this.watches.size === 0) return;
    for (const reader of readers) {
      const watch = this.watches.get(reader);
      if (watch) this.due(watch, position, true);
    }
  }

  /**
   * Lets go of the watches of feeds this process no longer serves (a partition that moved):
   * their gateways renew them with the new owner, whose ring takes over, and a watch left
   * here would go on publishing from a ring they no longer follow.
   */
  forget(served: (feed: FeedId) => boolean): void {
    for (const watch of [...this.watches.values()]) if (!served(watch.feed)) this.drop(watch);
  }

  /** Open streams (tier 1) and feeds in their grace period (tier 2), and events published. */
  counters(): Record<string, number> {
    let open = 0;
    for (const watch of this.watches.values()) if (watch.leases.size > 0) open++;
    return { streamFeedsOpen: open, streamFeedsInGrace: this.watches.size - open, streamEvents: this.published };
  }

  async stop(): Promise<void> {
    clearInterval(this.sweeper);
    for (const watch of this.watches.values()) this.drop(watch);
    await this.subscription?.stop();
  }

  /** Follows the log from its head once the first stream opens: changes before a watch began are in its first reading. */
  private following(): Promise<void> {
    this.starting ??= (async () => {
      const from = await this.ports.log.headPosition();
      this.subscription = this.ports.log.subscribeToAll({ from, onEvents: (records) => this.changed(records) });
    })();
    return this.starting;
  }

  private changed(records: Parameters<typeof decodeFeedEvents>[0]): void {
    if (this.watches.size === 0) return;
    for (const { position, event } of decodeFeedEvents(records)) {
      if (event.type === 'FeedErased') {
        // The rings may hold the erased feed's activities: every ring starts over (a resume
        // gets a reset), and every page is read again without them.
        for (const watch of this.watches.values()) {
          watch.ring = new StreamRing<StreamEvent>(randomBytes(4).toString('hex'), this.ports.options.ringSize);
          this.due(watch, position, true);
        }
        continue;
      }
      for (const feed of feedsChangedBy(event)) {
        const watching = this.bySource.get(feed);
        if (watching) for (const watch of watching) this.due(watch, position, false);
      }
      const lostReaders = feedWithReadersLostBy(event);
      const losing = lostReaders === undefined ? undefined : this.watches.get(lostReaders);
      if (losing) {
        losing.recheck = true;
        this.due(losing, position, false);
      }
      const follower = followerOf(event);
      const own = follower === undefined ? undefined : this.watches.get(follower);
      if (own) {
        this.refreshSources(own);
        this.due(own, position, false);
      }
    }
  }

  private watchOf(feed: FeedId): FeedWatch {
    let watch = this.watches.get(feed);
    if (watch) return watch;
    let ready!: () => void;
    watch = {
      feed,
      ring: new StreamRing<StreamEvent>(randomBytes(4).toString('hex'), this.ports.options.ringSize),
      page: [],
      groups: undefined,
      leases: new Map(),
      idleSince: undefined,
      sources: [feed],
      ready: new Promise<void>((resolve) => (ready = resolve)),
      due: -1,
      forced: false,
      recheck: false,
      running: false,
      readFrom: -1,
      dropped: false,
    };
    this.watches.set(feed, watch);
    this.index(watch, [feed]);
    const created = watch;
    void (async () => {
      try {
        if (this.ports.isTimeline(feed)) await this.loadSources(created);
        if (this.ports.isAggregated(feed)) created.groups = await this.ports.readFirstGroups(feed, this.ports.options.pageSize);
        else created.page = (await this.ports.readFirstPage(feed, this.ports.options.pageSize, 0)).items;
      } catch (error) {
        this.ports.warn(`stream of ${feed}: first reading failed: ${describe(error)}`);
      }
      ready();
    })();
    return watch;
  }

  private lease(watch: FeedWatch, watcher: string): void {
    watch.leases.set(watcher, Date.now() + this.ports.options.leaseMs);
    watch.idleSince = undefined;
  }

  /** Leases past their end go; a watch without any waits out its grace period, then goes. */
  private sweep(): void {
    const now = Date.now();
    for (const watch of this.watches.values()) {
      for (const [watcher, until] of watch.leases) if (until <= now) watch.leases.delete(watcher);
      this.settle(watch, now);
    }
  }

  private settle(watch: FeedWatch, now: number): void {
    if (watch.leases.size > 0) return;
    watch.idleSince ??= now;
    if (now - watch.idleSince >= this.ports.options.graceMs) this.drop(watch);
  }

  private drop(watch: FeedWatch): void {
    watch.dropped = true;
    this.watches.delete(watch.feed);
    this.unindex(watch, watch.sources);
  }

  private async loadSources(watch: FeedWatch): Promise<void> {
    const sources = [watch.feed, ...(await this.ports.following(watch.feed))];
    if (watch.dropped) return;
    this.unindex(watch, watch.sources);
    watch.sources = sources;
    this.index(watch, sources);
  }

  private refreshSources(watch: FeedWatch): void {
    this.loadSources(watch).catch((error: unknown) => this.ports.warn(`stream of ${watch.feed}: followed feeds not read: ${describe(error)}`));
  }

  private index(watch: FeedWatch, feeds: readonly FeedId[]): void {
    for (const feed of feeds) {
      let watching = this.bySource.get(feed);
      if (!watching) this.bySource.set(feed, (watching = new Set()));
      watching.add(watch);
    }
  }

  private unindex(watch: FeedWatch, feeds: readonly FeedId[]): void {
    for (const feed of feeds) {
      const watching = this.bySource.get(feed);
      if (!watching) continue;
      watching.delete(watch);
      if (watching.size === 0) this.bySource.delete(feed);
    }
  }

  /** A change at `position` may touch the watch's page: it is read again once the timelines stand there. */
  private due(watch: FeedWatch, position: number, forced: boolean): void {
    if (!forced && position <= watch.readFrom) return;
    watch.due = Math.max(watch.due, position);
    watch.forced ||= forced;
    if (!watch.running) void this.readLoop(watch);
  }

  private async readLoop(watch: FeedWatch): Promise<void> {
    watch.running = true;
    try {
      await watch.ready;
      while (watch.due >= 0 && !watch.dropped) {
        const position = watch.due;
        watch.due = -1;
        watch.forced = false;
        await this.readAgain(watch, position);
      }
    } catch (error) {
      this.ports.warn(`stream of ${watch.feed}: reading failed: ${describe(error)}`);
    } finally {
      watch.running = false;
    }
  }

  private async readAgain(watch: FeedWatch, position: number): Promise<void> {
    const timeline = this.ports.isTimeline(watch.feed);
    if (timeline) {
      const at = await this.ports.timelinePosition(watch.feed);
      if (at !== undefined && at < position) await this.ports.timelineReaches(watch.feed, position, REACH_TIMEOUT_MS);
      watch.readFrom = Math.max(watch.readFrom, (await this.ports.timelinePosition(watch.feed)) ?? position);
    } else {
      watch.readFrom = Math.max(watch.readFrom, position);
    }
    if (this.ports.isAggregated(watch.feed)) return this.readGroupsAgain(watch);
    const recheck = watch.recheck;
    watch.recheck = false;
    const { items } = await this.ports.readFirstPage(watch.feed, this.ports.options.pageSize, timeline ? 0 : position);
    if (watch.dropped) return;
    const keyOf = this.ports.keyOf(watch.feed);
    const changes = firstPageChanges(watch.page, items, this.ports.options.pageSize, keyOf, (a, b) => a === b || activityJson(a) === activityJson(b));
    watch.page = items;
    // No change, but some callers may have lost the right to read: an empty batch has the
    // gateways check their streams' callers, and end those who may not read the feed now.
    if (changes.length === 0 && !recheck) return;
    const events = changes.map((change) => watch.ring.append((id) => toEvent(id, change, keyOf)).event);
    this.published += events.length;
    this.ports.bus.publish(watch.feed, events);
  }

  /**
   * An aggregated feed's page is its first groups: they are read again and compared, and each
   * difference is a `group` event (a notification feed's carry its counts as of then).
   */
  private async readGroupsAgain(watch: FeedWatch): Promise<void> {
    const now = await this.ports.readFirstGroups(watch.feed, this.ports.options.pageSize);
    if (watch.dropped) return;
    const changes = groupPageChanges(watch.groups?.groups ?? [], now.groups, this.ports.options.pageSize, (a, b) => JSON.stringify(a) === JSON.stringify(b));
    watch.groups = now;
    if (changes.length === 0) return;
    const { groups: _groups, ...counts } = now;
    const events = changes.map((change) => watch.ring.append((id) => toGroupEvent(id, change, counts)).event);
    this.published += events.length;
    this.ports.bus.publish(watch.feed, events);
  }
}

/** A group as streams show it: its place stays inside (the events' order carries it). */
function unplaced({ key: _key, ...group }: PlacedGroupItem): Omit<PlacedGroupItem, 'key'> {
  return group;
}

function toGroupEvent(id: string, change: GroupPageChange<PlacedGroupItem>, counts: { unseen?: number; unread?: number }): StreamEvent {
  if (change.type === 'groupRemoved') return { id, type: 'group', data: { removed: change.id, ...counts } };
  return { id, type: 'group', data: { group: unplaced(change.group), rank: change.rank, ...counts } };
}

function toEvent(id: string, change: FirstPageChange, keyOf: KeyOf): StreamEvent {
  if (change.type === 'removed') return { id, type: 'removed', data: { id: change.id } };
  return { id, type: change.type, data: { activity: change.activity, cursor: encodeCursor(keyOf(change.activity)) } };
}

/** The feeds whose pages an event may change through their activities. */
function feedsChangedBy(event: FeedEvent): readonly FeedId[] {
  switch (event.type) {
    case 'ActivityAdded':
      return event.data.activity.to ? [event.data.activity.feed, ...event.data.activity.to] : [event.data.activity.feed];
    case 'ActivityRemoved':
      return event.data.to ? [event.data.feed, ...event.data.to] : [event.data.feed];
    case 'ActivityBumped':
    case 'ActivityUpdated':
    case 'FeedSettingsChanged':
    case 'NotificationsMarked': // a notification feed's marks change its groups' `seen` and `read`
      return [event.data.feed];
    default:
      return [];
  }
}

/**
 * The producer feed some of whose readers an event may take the right to read from: it
 * turned private, or a follower of it went (unfollowed, removed by the owner, or its kept
 * history ended).
 */
function feedWithReadersLostBy(event: FeedEvent): FeedId | undefined {
  switch (event.type) {
    case 'FeedSettingsChanged':
      return event.data.private ? event.data.feed : undefined;
    case 'FeedUnfollowed':
      return event.data.target;
    default:
      return undefined;
  }
}

/** The reader whose followed feeds an event changes. */
function followerOf(event: FeedEvent): FeedId | undefined {
  switch (event.type) {
    case 'FeedFollowed':
    case 'FeedUnfollowed':
    case 'FollowRequestRejected':
      return event.data.follower;
    default:
      return undefined;
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
