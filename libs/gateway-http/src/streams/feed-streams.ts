import { randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, Optional, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { FeedmillError, subjects, TimelinePartitioning, type FeedId, type StreamEvent } from '@feedmill/contracts';
import { FEED_GROUPS, FeedGroups } from '@feedmill/config';
import { REALTIME_OPTIONS, TIMELINE_PARTITIONING, type RealtimeOptions } from '@feedmill/runtime';
import { REQUEST_ID_HEADER } from '@feedmill/observability';
import { parseInput, REALTIME_BUS, SERVICE_CLIENT, type RealtimeBus, type ServiceClient } from '@feedmill/transport';
import { resolveFeed } from '../feed-params.js';
import { toHttpError } from '../http-errors.js';
import { callerOf, STREAM_ROUTE } from '../auth/authenticate.js';
import { ANYONE, type Caller } from '../auth/caller.js';
import { FeedAccess } from '../auth/feed-access.js';
import { parseEventId, SSE_HEARTBEAT, SSE_RETRY, sseFrame } from './sse-frames.js';


export const streamQuerySchema = z.strictObject({
  /** For clients that cannot set headers (a browser's EventSource): the token `Authorization` would carry. */
  access_token: z.string().min(1).max(8192).optional().meta({ description: 'The bearer token, for clients that cannot send `Authorization` (a browser’s EventSource).' }),
  /** For clients that cannot set `Last-Event-ID`. */
  lastEventId: z.string().min(1).max(200).optional().meta({ description: 'Resume after this event, as the `Last-Event-ID` header does (which wins when both are sent).' }),
});

/**
 * Bytes a connection may have waiting to be sent before it is closed: a client that does not
 * read would otherwise hold ever more of the gateway's memory. It reconnects with
 * `Last-Event-ID` and gets what it missed, or a reset.
 */
const MAX_UNSENT_BYTES = 1024 * 1024;

/** The longest a Node timer waits. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** One open connection of a client. */
interface Connection {
  readonly reply: FastifyReply;
  /** Who opened it: what it is sent is checked against what they may read, event after event. */
  readonly caller: Caller;
  /** Events that arrived before the stream's first answer, to be sent after it; null once it was sent. */
  early: StreamEvent[] | null;
  /** The ring the events it was sent come from, and the last one's number. */
  epoch: string;
  seq: number;
  /** Whether a resync after a changed epoch is under way. */
  resyncing: boolean;
  /** Writes its heartbeat comments, once it is open. */
  heartbeat?: ReturnType<typeof setInterval>;
  /** Ends it when its caller's token expires: a reconnect with that token is refused. */
  expiry?: ReturnType<typeof setTimeout>;
}

/** The connections this gateway holds on one feed, sharing one subscription to its events. */
interface OpenFeed {
  readonly connections: Set<Connection>;
  readonly unsubscribe: Promise<() => void>;
}

/**
 * `GET /v1/feeds/{group}/{id}/stream`: Server-Sent Events of the changes to a feed's first
 * page. This gateway subscribes to the feed's events on the realtime bus, asks the timeline
 * service to watch the feed (which answers what the stream starts with: the events missed
 * since `Last-Event-ID`, or a `reset` with the page), and renews its watches while
 * connections are open. A closed connection lets go of everything it held: its heartbeat,
 * and with the feed's last connection the subscription and the watch (whose grace period
 * then starts).
 */
const STREAM_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache, no-transform', 'x-accel-buffering': 'no' };

@Injectable()
export class FeedStreams implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('streams');
  /** This gateway process as a watcher: its leases are its own. */
  private readonly watcher = `gateway-${randomUUID()}`;
  private readonly feeds = new Map<FeedId, OpenFeed>();
  private renewals: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly adapterHost: HttpAdapterHost,
    @Inject(SERVICE_CLIENT) private readonly client: ServiceClient,
    @Inject(FEED_GROUPS) private readonly groups: FeedGroups,
    private readonly access: FeedAccess,
    @Inject(TIMELINE_PARTITIONING) private readonly partitioning: TimelinePartitioning,
    @Inject(REALTIME_OPTIONS) private readonly options: RealtimeOptions,
    @Optional() @Inject(REALTIME_BUS) private readonly bus?: RealtimeBus | null,
  ) {}

  onModuleInit(): void {
    const fastify = this.adapterHost.httpAdapter.getInstance<FastifyInstance>();
    fastify.get(STREAM_ROUTE, (request, reply) => this.open(request, reply));
    this.renewals = setInterval(() => this.renew(), this.options.leaseMs / 3);
    this.renewals.unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.renewals);
    for (const open of this.feeds.values()) for (const connection of open.connections) connection.reply.raw.end();
  }

  /** Connections open now (tests check that closed ones let go). */
  get openConnections(): number {
    let count = 0;
    for (const open of this.feeds.values()) count += open.connections.size;
    return count;
  }

  private async open(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    let feed: FeedId;
    let lastEventId: string | undefined;
    const caller = callerOf(request);
    try {
      const params = request.params as Record<string, string>;
      feed = resolveFeed(this.groups, params['group']!, params['id']!);
      const query = parseInput(streamQuerySchema, request.query ?? {}, 'query');
      const header = request.headers['last-event-id'];
      lastEventId = (typeof header === 'string' && header.length > 0 ? header : undefined) ?? query.lastEventId;
      await this.access.requireReader(caller, feed);
      if (!this.bus) throw new FeedmillError('unavailable', 'this process serves no streams: run the standalone without HTTP_WORKERS, or the cluster gateway', 'stream');
    } catch (error) {
      const failure = toHttpError(error);
      return void reply.code(failure.status).send(failure.body);
    }
    // HEAD answers what GET would start with, and opens no stream that would never end.
    if (request.method === 'HEAD') return void reply.code(200).headers(STREAM_HEADERS).send();
    const connection: Connection = { reply, caller, early: [], epoch: '', seq: 0, resyncing: false };
    const raw = reply.raw;
    // From now on a client that goes away, even before the stream's first answer, lets go of everything.
    raw.once('close', () => {
      clearInterval(connection.heartbeat);
      clearTimeout(connection.expiry);
      this.leave(feed, connection);
    });
    if (caller.expiresAtMs !== undefined) this.endAtExpiry(connection, caller.expiresAtMs);
    const open = this.join(feed, connection);
    let first: StreamEvent[];
    try {
      await open.unsubscribe;
      first = (await this.client.request(subjects.timeline.watch, { feed, watcher: this.watcher, lastEventId }, this.partitioning.routeOf(feed))).events;
    } catch (error) {
      this.leave(feed, connection);
      const failure = toHttpError(error);
      return void reply.code(failure.status).send(failure.body);
    }
    if (raw.destroyed) return;
    reply.hijack();
    // Hijacked: the headers Fastify's hooks set on the reply (the request's id) are written here.
    raw.writeHead(200, { ...STREAM_HEADERS, connection: 'keep-alive', [REQUEST_ID_HEADER]: request.id });
    raw.write(SSE_RETRY);
    connection.heartbeat = setInterval(() => raw.write(SSE_HEARTBEAT), this.options.heartbeatMs);
    connection.heartbeat.unref();
    const early = connection.early!;
    connection.early = null;
    if (first.length > 0) this.remember(connection, first[first.length - 1]!.id);
    else if (lastEventId !== undefined) this.remember(connection, lastEventId);
    for (const event of first) raw.write(sseFrame(event));
    this.send(feed, connection, early);
  }

  /** Ends the connection when its token expires; a timer waits at most about 24 days, so a later expiry is waited for in steps. */
  private endAtExpiry(connection: Connection, expiresAtMs: number): void {
    const waitMs = expiresAtMs - Date.now();
    connection.expiry = setTimeout(() => {
      if (waitMs > MAX_TIMER_MS) this.endAtExpiry(connection, expiresAtMs);
      else if (connection.early) connection.reply.raw.destroy();
      else connection.reply.raw.end();
    }, Math.max(0, Math.min(waitMs, MAX_TIMER_MS)));
    connection.expiry.unref();
  }

  private join(feed: FeedId, connection: Connection): OpenFeed {
    let open = this.feeds.get(feed);
    if (!open) {
      const connections = new Set<Connection>();
      // The bus's events are checked and sent one batch after another, in order.
      let forwarding = Promise.resolve();
      const unsubscribe = this.bus!.subscribe(feed, (events) => {
        forwarding = forwarding.then(() => this.forward(feed, connections, events)).catch((error: unknown) => this.logger.error(`stream of ${feed}: ${describe(error)}`));
      });
      open = { connections, unsubscribe };
      this.feeds.set(feed, open);
    }
    open.connections.add(connection);
    return open;
  }

  private leave(feed: FeedId, connection: Connection): void {
    const open = this.feeds.get(feed);
    if (!open || !open.connections.delete(connection) || open.connections.size > 0) return;
    this.feeds.delete(feed);
    // A subscription that failed (the open answered its caller for it) has nothing to end.
    void open.unsubscribe.then((unsubscribe) => unsubscribe()).catch(() => undefined);
    this.client.request(subjects.timeline.unwatch, { feed, watcher: this.watcher }, this.partitioning.routeOf(feed)).catch((error: unknown) => this.logger.warn(`unwatch ${feed}: ${describe(error)}`));
  }

  /**
   * Sends the bus's events to the feed's connections whose callers may still read the feed.
   * What a caller may read changes while its stream is open (the feed turns private, its owner
   * removes a follower), and a stream checked only when it opened would go on showing what
   * they may no longer read. A feed anyone may read is checked once for every connection (a
   * timeline's reader is its owner, checked at the start); otherwise each caller is, and a
   * connection whose caller may not read the feed any more, or whose check fails, is closed:
   * reconnecting, it is refused, or resumes where it was.
   */
  private async forward(feed: FeedId, connections: ReadonlySet<Connection>, events: readonly StreamEvent[]): Promise<void> {
    // No events: who may read the feed changed (see the hub's `recheck`), so the graph answers as of the log's head.
    const recheck = events.length === 0;
    const mayRead = (caller: Caller) => this.access.mayRead(caller, feed, recheck).catch(() => false);
    const everyone = this.groups.isTimeline(feed) || (await mayRead(ANYONE));
    const open = [...connections];
    // Each caller checked at once, not one after another; the events are then sent in order.
    const allowed = everyone ? open.map(() => true) : await Promise.all(open.map((connection) => mayRead(connection.caller)));
    for (const [index, connection] of open.entries()) {
      if (allowed[index]) this.send(feed, connection, events);
      // One not answered yet is dropped: its start sees it destroyed and writes nothing.
      else if (connection.early) connection.reply.raw.destroy();
      else connection.reply.raw.end();
    }
  }

  /** Events from the bus: those after what the connection was sent, in order; from another ring, a resync. */
  private send(feed: FeedId, connection: Connection, events: readonly StreamEvent[]): void {
    if (connection.early) return void connection.early.push(...events);
    for (const event of events) {
      const id = parseEventId(event.id);
      if (!id) continue;
      if (id.epoch !== connection.epoch) {
        // A new ring that starts with the whole page: the stream goes on from it.
        if (event.type !== 'reset') return this.resync(feed, connection);
        connection.epoch = id.epoch;
        connection.seq = id.seq;
        this.write(connection, sseFrame(event));
        continue;
      }
      if (id.seq <= connection.seq) continue;
      connection.seq = id.seq;
      this.write(connection, sseFrame(event));
    }
  }

  private write(connection: Connection, frame: string): void {
    const raw = connection.reply.raw;
    raw.write(frame);
    if (raw.writableLength > MAX_UNSENT_BYTES) raw.destroy();
  }

  /**
   * The feed's watch began again elsewhere (its timeline process restarted, or it passed its
   * grace while this gateway could not renew) and this stream missed its first `reset`: it
   * asks for what it missed, which is a reset, and goes on from the new ring.
   */
  private resync(feed: FeedId, connection: Connection): void {
    if (connection.resyncing) return;
    connection.resyncing = true;
    connection.early = [];
    const lastEventId = `${connection.epoch}-${connection.seq}`;
    this.client
      .request(subjects.timeline.watch, { feed, watcher: this.watcher, lastEventId }, this.partitioning.routeOf(feed))
      .then(({ events }) => {
        const early = connection.early ?? [];
        connection.early = null;
        connection.resyncing = false;
        if (events.length > 0) this.remember(connection, events[events.length - 1]!.id);
        for (const event of events) this.write(connection, sseFrame(event));
        this.send(feed, connection, early);
      })
      .catch((error: unknown) => {
        this.logger.warn(`stream of ${feed}: resync failed, closing: ${describe(error)}`);
        connection.reply.raw.end();
      });
  }

  private remember(connection: Connection, eventId: string): void {
    const id = parseEventId(eventId);
    if (!id) return;
    connection.epoch = id.epoch;
    connection.seq = id.seq;
  }

  private renew(): void {
    if (this.feeds.size === 0) return;
    const feeds = [...this.feeds.keys()];
    this.client.request(subjects.timeline.renewWatches, { feeds, watcher: this.watcher }).catch((error: unknown) => this.logger.warn(`renewing ${feeds.length} stream watches: ${describe(error)}`));
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
