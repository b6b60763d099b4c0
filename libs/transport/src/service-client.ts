import { FeedmillError, partitionSubject, subjects, type PartitionedSubject, type ReplyOf, type RequestOf, type Subject } from '@feedmill/contracts';
import { checkedReply } from './checked-reply.js';
import { toFeedmillError } from './error-body.js';
import type { InProcessServer } from './in-process.server.js';
import { NatsRequests, NoResponderError, type Requests } from './nats-requests.js';
import { writeArrivedPage, writeHeldPage, type PageSubject, type WrittenPage } from './written-page.js';

/**
 * Request/reply to another service, typed by the subject's entry in the wire table: the
 * payload must be its request, and the reply is checked to be its reply before it is
 * returned. Failures arrive as {@link FeedmillError}s.
 */
export interface ServiceClient {
  /** With a `route`, the request goes to one timeline partition's subject ({@link partitionSubject}). */
  request<S extends Subject>(subject: S, payload: RequestOf<S>, route?: PartitionRoute): Promise<ReplyOf<S>>;
  /** A page subject's reply with its items written as JSON, where they are held if it can. */
  requestPage<S extends PageSubject>(subject: S, payload: RequestOf<S>, route?: PartitionRoute): Promise<WrittenPage>;
  close(): Promise<void>;
  /** Requests are handed to the services in this process as objects, never encoded: their size is no transport's concern. @defaultValue false */
  readonly handsOverObjects?: boolean;
}

/** Which timeline partition a request goes to (none: the plain subject). */
export interface PartitionRoute {
  partition: number;
}

/** The subject a request travels on: the partition's own when it is routed to one. */
export function routedSubject(subject: Subject, route: PartitionRoute | undefined): string {
  return route === undefined ? subject : partitionSubject(subject as PartitionedSubject, route.partition);
}

export const SERVICE_CLIENT = Symbol('ServiceClient');

/** @defaultValue 15 s */
const DEFAULT_TIMEOUT_MS = 15_000;

/**
 * How long a client that found no timeline answering {@link subjects.timeline.readWritten}
 * reads pages the older way before it asks again: while a rolling deploy replaces timeline
 * processes of a version before that subject, each read would otherwise cost a request that
 * nobody answers first.
 */
const WRITTEN_PAGES_RETRY_MS = 30_000;

/** To services in other processes (over NATS in the cluster): each reply is checked on arrival. */
export class RemoteServiceClient implements ServiceClient {
  /** Until when timeline reads go to `read` rather than `readWritten` (see {@link WRITTEN_PAGES_RETRY_MS}). */
  private writtenPagesRefusedUntil = 0;

  constructor(
    private readonly requests: Requests,
    private readonly timeoutMs = DEFAULT_TIMEOUT_MS,
  ) {}

  async request<S extends Subject>(subject: S, payload: RequestOf<S>, route?: PartitionRoute): Promise<ReplyOf<S>> {
    let reply: unknown;
    try {
      reply = await this.requests.send(routedSubject(subject, route), payload, this.timeoutMs);
    } catch (error) {
      throw toFeedmillError(error, subject);
    }
    return checkedReply(subject, reply);
  }

  /**
   * A timeline page comes written from the timeline process ({@link subjects.timeline.readWritten}),
   * which writes each activity once for all its reads, so that this process neither parses
   * the activities nor writes them again; from a timeline process too old to answer that
   * subject, it is asked for as objects and written here.
   */
  async requestPage<S extends PageSubject>(subject: S, payload: RequestOf<S>, route?: PartitionRoute): Promise<WrittenPage> {
    if (subject === subjects.timeline.read && Date.now() >= this.writtenPagesRefusedUntil) {
      try {
        return await this.request(subjects.timeline.readWritten, payload as RequestOf<typeof subjects.timeline.read>, route);
      } catch (error) {
        if (!(error instanceof FeedmillError && error.cause instanceof NoResponderError)) throw error;
        this.writtenPagesRefusedUntil = Date.now() + WRITTEN_PAGES_RETRY_MS;
      }
    }
    return writeArrivedPage(await this.request(subject, payload, route));
  }

  close(): Promise<void> {
    return this.requests.close();
  }
}

/**
 * Calls the handlers of an {@link InProcessServer} directly: no sockets, no serialization,
 * and no validation on either side. Requests and replies are objects that typed code built
 * (`MessageHandlers` types every handler's reply), so checking them again in the same
 * process would only repeat what the compiler checked; what crosses a process boundary is
 * checked on arrival ({@link RemoteServiceClient}, `parseRequest`).
 */
export class InProcessServiceClient implements ServiceClient {
  readonly handsOverObjects = true;

  constructor(private readonly server: InProcessServer) {}

  async request<S extends Subject>(subject: S, payload: RequestOf<S>, route?: PartitionRoute): Promise<ReplyOf<S>> {
    try {
      return (await this.server.call(routedSubject(subject, route), payload)) as ReplyOf<S>;
    } catch (error) {
      throw toFeedmillError(error, subject);
    }
  }

  async requestPage<S extends PageSubject>(subject: S, payload: RequestOf<S>, route?: PartitionRoute): Promise<WrittenPage> {
    return writeHeldPage(await this.request(subject, payload, route));
  }

  async close(): Promise<void> {}
}

/** A client to the services over NATS (the cluster's transport). */
export function natsClient(url: string): RemoteServiceClient {
  return new RemoteServiceClient(new NatsRequests([url]));
}
