import { Logger } from '@nestjs/common';
import type { NatsConnection, Subscription } from '@nats-io/transport-node';
import { closeNats, connectNats, fitsIn, flushWithin, messageBytesOf } from '@feedmill/event-log';
import { realtimeSubject, type FeedId, type StreamEvent } from '@feedmill/contracts';
import type { MessageLink } from './linked-services.js';

/** Receives the events of one feed's stream, in order, a batch at a time. */
export type StreamListener = (events: readonly StreamEvent[]) => void;

/**
 * Where the timeline service publishes a feed's stream events and the gateway that holds
 * the feed's open streams receives them. Nothing is kept: a listener that was not there
 * misses the events, and resumes from the timeline's ring (`Last-Event-ID`).
 */
export interface RealtimeBus {
  publish(feed: FeedId, events: readonly StreamEvent[]): void;
  /** Listens to one feed's events until the returned function is called; resolves once events reach it. */
  subscribe(feed: FeedId, listener: StreamListener): Promise<() => void>;
  close(): Promise<void>;
}

/** Injection token of the {@link RealtimeBus}; null where there is none (a standalone's HTTP workers). */
export const REALTIME_BUS = Symbol('RealtimeBus');

/** Both ends in one process (the standalone): a listener is called in the publisher's turn, with the same objects. */
export class InProcessRealtimeBus implements RealtimeBus {
  private readonly listeners = new Map<FeedId, Set<StreamListener>>();

  publish(feed: FeedId, events: readonly StreamEvent[]): void {
    const listening = this.listeners.get(feed);
    if (listening) for (const listener of listening) listener(events);
  }

  subscribe(feed: FeedId, listener: StreamListener): Promise<() => void> {
    let listening = this.listeners.get(feed);
    if (!listening) this.listeners.set(feed, (listening = new Set()));
    listening.add(listener);
    return Promise.resolve(() => {
      listening.delete(listener);
      if (listening.size === 0 && this.listeners.get(feed) === listening) this.listeners.delete(feed);
    });
  }

  /** Feeds someone listens to now (tests check that closed streams let go). */
  get listenedFeeds(): number {
    return this.listeners.size;
  }

  /** How many listen to `feed`. */
  listenersOf(feed: FeedId): number {
    return this.listeners.get(feed)?.size ?? 0;
  }

  close(): Promise<void> {
    this.listeners.clear();
    return Promise.resolve();
  }
}

/**
 * Over core NATS (the cluster): a feed's events are one message per batch on
 * `feed.realtime.<group>.<id>`, JSON, and a gateway subscribes to the subjects of the feeds
 * its clients stream. Core NATS keeps nothing, which is what a stream wants: a gateway that
 * was away resumes from the ring.
 */
export class NatsRealtimeBus implements RealtimeBus {
  private readonly logger = new Logger('realtime');

  constructor(private readonly connection: NatsConnection) {}

  /** In as many messages as the batch needs to fit NATS's `max_payload` (a bulk import of large activities into a streamed feed), in order. */
  publish(feed: FeedId, events: readonly StreamEvent[]): void {
    const subject = realtimeSubject(feed);
    const { messages, dropped } = messagesOf(events, messageBytesOf(this.connection));
    for (const message of messages) this.connection.publish(subject, message);
    if (dropped > 0) this.logger.warn(`${dropped} stream events of ${feed} are larger than a NATS message: its streams miss them`);
  }

  async subscribe(feed: FeedId, listener: StreamListener): Promise<() => void> {
    const subscription: Subscription = this.connection.subscribe(realtimeSubject(feed), {
      callback: (error, message) => {
        if (!error) listener(message.json<StreamEvent[]>());
      },
    });
    // A round trip to the server: once it answers, the subscription is registered there.
    await flushWithin(this.connection).catch((error: unknown) => {
      subscription.unsubscribe();
      throw error;
    });
    return () => subscription.unsubscribe();
  }

  async close(): Promise<void> {
    await closeNats(this.connection);
  }
}

/**
 * The events as JSON arrays of at most `maxBytes` each, in order. A `reset` larger than that
 * (a first page of large activities or groups) keeps as many of its page's first entries as
 * fit: the page a stream starts from may be shorter, never wrong. Any other event larger than
 * that is `dropped`: the stream's clients miss it, as they miss what a gateway that was away
 * missed. Publishing it would throw, which no caller could do better with.
 */
export function messagesOf(events: readonly StreamEvent[], maxBytes: number): { messages: string[]; dropped: number } {
  const whole = JSON.stringify(events);
  if (fitsIn(whole, maxBytes)) return { messages: [whole], dropped: 0 };
  const messages: string[] = [];
  let batch: string[] = [];
  let bytes = 2;
  let dropped = 0;
  for (const event of events) {
    const json = fitted(event, maxBytes - 2);
    if (json === undefined) {
      dropped++;
      continue;
    }
    const size = Buffer.byteLength(json) + 1;
    if (batch.length > 0 && bytes + size > maxBytes) {
      messages.push(`[${batch.join(',')}]`);
      batch = [];
      bytes = 2;
    }
    batch.push(json);
    bytes += size;
  }
  if (batch.length > 0) messages.push(`[${batch.join(',')}]`);
  return { messages, dropped };
}

/** The event's JSON within `maxBytes`: a `reset` with its page cut short where it must be; undefined when it cannot fit. */
function fitted(event: StreamEvent, maxBytes: number): string | undefined {
  const json = JSON.stringify(event);
  if (fitsIn(json, maxBytes)) return json;
  if (event.type !== 'reset') return undefined;
  const data = event.data;
  const entries: unknown[] = 'items' in data ? [...data.items] : [...data.groups];
  while (entries.length > 1) {
    entries.pop();
    const shorter = JSON.stringify({ ...event, data: { ...data, ['items' in data ? 'items' : 'groups']: entries } });
    if (fitsIn(shorter, maxBytes)) return shorter;
  }
  return undefined;
}

/** A bus over its own NATS connection. */
export async function natsRealtimeBus(url: string): Promise<NatsRealtimeBus> {
  return new NatsRealtimeBus(await connectNats({ servers: [url], name: 'feedmill-realtime' }));
}

/** What a {@link LinkedRealtimeBus} and {@link serveRealtimeLink} say to each other: objects, where service calls are arrays. */
type RealtimeLinkMessage = { realtime: 'subscribe' | 'unsubscribe'; feed: FeedId } | { realtime: 'events'; feed: FeedId; events: readonly StreamEvent[] };

function isRealtimeLinkMessage(message: unknown): message is RealtimeLinkMessage {
  return typeof message === 'object' && message !== null && !Array.isArray(message) && 'realtime' in message;
}

/**
 * The bus of a standalone's HTTP worker: the events of the feeds it streams come over its
 * link from the process holding the timelines ({@link serveRealtimeLink}), which publishes
 * nothing (the worker publishes nothing either).
 */
export class LinkedRealtimeBus implements RealtimeBus {
  private readonly local = new InProcessRealtimeBus();

  constructor(private readonly link: MessageLink) {
    link.on('message', (message) => {
      if (isRealtimeLinkMessage(message) && message.realtime === 'events') this.local.publish(message.feed, message.events);
    });
  }

  publish(): void {
    throw new Error('an HTTP worker publishes no stream events');
  }

  async subscribe(feed: FeedId, listener: StreamListener): Promise<() => void> {
    const first = this.local.listenersOf(feed) === 0;
    const unsubscribe = await this.local.subscribe(feed, listener);
    // Sent before any call the worker makes next: the link keeps their order.
    if (first) this.link.send({ realtime: 'subscribe', feed } satisfies RealtimeLinkMessage);
    return () => {
      unsubscribe();
      if (this.local.listenersOf(feed) === 0) this.link.send({ realtime: 'unsubscribe', feed } satisfies RealtimeLinkMessage);
    };
  }

  close(): Promise<void> {
    return this.local.close();
  }
}

/**
 * Forwards the events of the feeds an HTTP worker at the other end of `link` streams, from
 * `bus`; the returned function lets go of them all (the worker is gone).
 */
export function serveRealtimeLink(link: MessageLink, bus: RealtimeBus): () => void {
  const subscriptions = new Map<FeedId, Promise<() => void>>();
  link.on('message', (message) => {
    if (!isRealtimeLinkMessage(message)) return;
    if (message.realtime === 'subscribe' && !subscriptions.has(message.feed)) {
      const feed = message.feed;
      subscriptions.set(feed, bus.subscribe(feed, (events) => link.send({ realtime: 'events', feed, events } satisfies RealtimeLinkMessage)));
    } else if (message.realtime === 'unsubscribe') {
      void subscriptions.get(message.feed)?.then((unsubscribe) => unsubscribe());
      subscriptions.delete(message.feed);
    }
  });
  return () => {
    for (const unsubscribing of subscriptions.values()) void unsubscribing.then((unsubscribe) => unsubscribe()).catch(() => undefined);
    subscriptions.clear();
  };
}
