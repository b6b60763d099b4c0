import { Logger } from '@nestjs/common';
import { ServerNats, type MessageHandler, type NatsOptions } from '@nestjs/microservices';
import type { Msg, MsgHdrs, NatsConnection, Subscription } from '@nats-io/transport-node';
import { setTimeout as sleep } from 'node:timers/promises';
import { REQUEST_ID_HEADER, withRequestId } from '@feedmill/observability';
import { flushWithin, publishReply } from '@feedmill/event-log';

type NatsServerOptions = Required<NatsOptions>['options'];

/** How a {@link DrainingNatsServer} stops. */
export interface DrainingNatsServerOptions {
  /** Also the queue group of every subscription, so replicas share requests. */
  queue: string;
  /**
   * On close, how long the requests already taken get to finish, counted from the moment
   * it starts to stop; it waits less when they finish sooner.
   */
  graceMs: number;
}

/** A subscription the server drains when it stops, and that its owner can end sooner. */
export interface ServerSubscription {
  stop(): void;
}

/**
 * Nest's NATS server, stopping so that no request it took goes unanswered: on close it
 * drains every subscription on its connection (its `@MessagePattern` subjects and those
 * added with {@link subscribe}, e.g. timeline partitions') at once, so messages NATS had
 * already routed to it are still handled and new ones go to the other replicas of the
 * queue group; then it waits until every request it took is answered, or the grace period
 * ends; only then does its connection close. Nest's own graceful close unsubscribes only its
 * own subscriptions, without a drain, and always sleeps the whole grace period.
 */
export class DrainingNatsServer extends ServerNats {
  private readonly drainable = new Set<Subscription>();
  private readonly stopController = new AbortController();
  private inFlight = 0;
  private idleWaiters: Array<() => void> = [];
  private readonly queue: string;
  private readonly graceMs: number;
  /** Read once: the level does not change while the process runs. */
  private readonly debugging = Logger.isLevelEnabled('debug');

  constructor(options: Omit<NatsServerOptions, 'queue' | 'gracefulShutdown' | 'gracePeriod'> & DrainingNatsServerOptions) {
    const { graceMs, ...natsOptions } = options;
    // Reconnects however long the server is away, as every other connection of ours does
    // (`connectNats`): with nats.js's default of 10 attempts 2 s apart, an outage of some 20 s
    // closed this connection for good, and the process, alive and holding its leases, never
    // answered a request again.
    super({ maxReconnectAttempts: -1, noAsyncTraces: true, ...natsOptions, gracefulShutdown: false });
    this.queue = options.queue;
    this.graceMs = graceMs;
  }

  /** Aborted the moment the server starts to stop: waits inside handlers should end so that they answer within the grace. */
  get stopping(): AbortSignal {
    return this.stopController.signal;
  }

  /** Requests taken and not yet answered. */
  get requestsInFlight(): number {
    return this.inFlight;
  }

  override bindEvents(client: NatsConnection): void {
    void client;
    for (const [channel, handler] of this.messageHandlers) this.subscribeHandler(channel, (handler.extras?.['queue'] as string | undefined) ?? this.queue);
  }

  /**
   * Answers `subject` in the server's queue group with the handler registered for it
   * (`addHandler`) until stopped or until the server stops. Once the server is stopping it
   * subscribes nothing: the returned handle stops nothing.
   */
  subscribe(subject: string): ServerSubscription {
    if (this.stopping.aborted) return { stop: () => undefined };
    const subscription = this.subscribeHandler(subject, this.queue);
    return {
      stop: () => {
        if (!this.drainable.delete(subscription) || subscription.isClosed() || subscription.isDraining()) return;
        subscription.unsubscribe();
      },
    };
  }

  /** Resolves once NATS has every subscription made so far, and no-ops once stopping. */
  async flush(): Promise<void> {
    if (!this.stopping.aborted) await flushWithin(this.unwrap<NatsConnection>());
  }

  /**
   * Subjects are plain strings, registered as they are: looked up as they are. Nest's own
   * lookup first tries each one as JSON, which throws (and builds a stack trace) on every
   * message.
   */
  override getHandlerByPattern(pattern: string): MessageHandler | null {
    return this.messageHandlers.get(pattern) ?? super.getHandlerByPattern(pattern);
  }

  /**
   * Replies as Nest's server does, except that one larger than a NATS message may be goes in
   * parts ({@link publishReply}), which the callers' `InboxRequests` put together. Nest's
   * own publish throws on it, and the caller waited out its timeout.
   */
  override getPublisher(natsMsg: Msg, id: string): (response: object) => void {
    const replyTo = natsMsg.reply;
    if (!replyTo) return () => undefined;
    return (response) => {
      const { data, headers } = this.serializer.serialize({ ...response, id }) as { data: string; headers?: MsgHdrs };
      publishReply(this.unwrap<NatsConnection>(), replyTo, data, headers);
    };
  }

  override async handleMessage(channel: string, message: Msg): Promise<unknown> {
    this.inFlight++;
    try {
      // A request sent while serving an HTTP request names it: what the handler logs carries its id.
      const requestId = message.headers?.get(REQUEST_ID_HEADER) || undefined;
      return await withRequestId(requestId, () => this.handleLogged(channel, message));
    } finally {
      if (--this.inFlight === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
    }
  }

  /** At `LOG_LEVEL=debug`, a line per request handled, with its subject and time. */
  private async handleLogged(channel: string, message: Msg): Promise<unknown> {
    if (!this.debugging) return super.handleMessage(channel, message);
    const started = performance.now();
    try {
      return await super.handleMessage(channel, message);
    } finally {
      this.logger.debug?.(`handled ${message.subject} in ${(performance.now() - started).toFixed(1)} ms`);
    }
  }

  override async close(): Promise<void> {
    if (!this.stopping.aborted) {
      const heldAtStop = this.inFlight;
      this.stopController.abort();
      await this.drain(heldAtStop);
    }
    await super.close();
  }

  private subscribeHandler(subject: string, queue: string): Subscription {
    const connection = this.unwrap<NatsConnection>();
    const subscription = connection.subscribe(subject, { queue, callback: (this.getMessageHandler(subject) as (error: Error | null, message: Msg) => void).bind(this) });
    this.drainable.add(subscription);
    return subscription;
  }

  /** Drains the subscriptions, then waits for the requests taken, both within the grace. */
  private async drain(heldAtStop: number): Promise<void> {
    let connection: NatsConnection;
    try {
      connection = this.unwrap<NatsConnection>();
    } catch {
      return;
    }
    const graceEnds = new AbortController();
    const grace = sleep(this.graceMs, 'grace over' as const, { signal: graceEnds.signal }).catch(() => 'done' as const);
    try {
      const draining = [...this.drainable].map((subscription) => subscription.drain().catch(() => undefined));
      this.drainable.clear();
      await Promise.race([Promise.all(draining), grace]);
      this.logger.log(`stopped taking requests; held ${heldAtStop} at the stop, ${this.inFlight} still running`);
      const idle = this.inFlight === 0 ? Promise.resolve() : new Promise<void>((resolve) => this.idleWaiters.push(resolve));
      if ((await Promise.race([idle.then(() => 'idle' as const), grace])) === 'grace over') {
        this.logger.warn(`${this.inFlight} requests still running after the ${this.graceMs} ms grace period are cut off`);
      }
      // Replies are sent before the connection closes.
      await Promise.race([connection.flush(), grace]).catch(() => undefined);
    } finally {
      graceEnds.abort();
    }
  }
}
