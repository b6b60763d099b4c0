import { Logger } from '@nestjs/common';
import { isTransientFailure, type DeliverReply, type DeliverRequest, type FeedId, type TimelineDelivery } from '@feedmill/contracts';
import { deliveriesByReader } from '@feedmill/feed-models';
import type { TimelineStore } from '@feedmill/stores';
import type { ReaderFailure } from './reader-dead-letters.js';
import { metrics } from '@feedmill/observability';

const readerDeadLetters = metrics.deadLetters.labels('reader');

/** How timeline retries a delivery that fails for one reader before it dead-letters it for that reader. */
export interface ReaderRetryPolicy {
  /** Attempts of the reader's failing delivery alone. @defaultValue 3 */
  attempts: number;
  /** Wait before the second attempt, doubled before each next one. @defaultValue 50 ms */
  firstBackoffMs: number;
  /**
   * More readers than this failing in one request is no reader's own fault (a store that
   * takes no entry of a whole group, say): the request then fails as a whole, as it would
   * without isolation, and is not tried further. It also bounds the time one request can
   * spend in retries to well under the transport's request timeout. @defaultValue 16
   */
  maxFailingReaders: number;
}

export const READER_RETRY_POLICY = Symbol('ReaderRetryPolicy');
export const defaultReaderRetryPolicy: ReaderRetryPolicy = { attempts: 3, firstBackoffMs: 50, maxFailingReaders: 16 };

/** Where a reader's failed delivery is kept, durably, before the request is answered. */
export interface ReaderDeadLetterSink {
  append(failure: ReaderFailure): Promise<unknown>;
}

/** The store stands elsewhere than the request's fence: another request moved it meanwhile. */
class FenceMovedError extends Error {
  override readonly name = 'FenceMovedError';
  constructor(readonly position: number) {
    super(`the timelines stand at position ${position}`);
  }
}

/**
 * One reader's failure stays that reader's. When a store fails a whole delivery request
 * (an error on one reader's entry, a document grown too large), the request is applied again
 * reader by reader, each reader's deliveries fenced where the request starts so that the
 * position stays put; a reader whose deliveries fail has each of them retried alone, and one
 * that still fails is dead-lettered for that reader. Only then does the store move to the
 * request's position, so a crash before the answer loses nothing: fan-out sends the request
 * again, and applying it again changes nothing.
 *
 * A failure that passes with time, a store that takes no write at all (an empty request fenced
 * where the request starts fails too), or a request that fails for every one of its readers,
 * or for more than {@link ReaderRetryPolicy.maxFailingReaders}, is no one reader's: it is
 * thrown as it came, for fan-out to wait out or dead-letter the event for everyone.
 *
 * Nothing here runs while requests succeed: it starts from a request that already failed.
 */
export class ReaderIsolation {
  private readonly logger = new Logger('timeline');
  private letters = 0;

  constructor(
    private readonly deadLetters: ReaderDeadLetterSink,
    private readonly retry: ReaderRetryPolicy = defaultReaderRetryPolicy,
    private readonly pause: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
  ) {}

  /** Readers' deliveries dead-lettered since start. */
  get deadLettered(): number {
    return this.letters;
  }

  /** Applies `request`, which `store` failed with `failure`, reader by reader; see the class. */
  async deliverReaderByReader(store: TimelineStore, request: DeliverRequest, failure: unknown): Promise<DeliverReply> {
    if (isTransientFailure(failure)) throw failure;
    const byReader = deliveriesByReader(request.deliveries);
    if (byReader.size === 0) throw failure;
    try {
      if (!(await this.applies(store, request.after, []))) throw failure;
      const failing: Array<[FeedId, TimelineDelivery[]]> = [];
      for (const [reader, deliveries] of byReader) {
        if (await this.applies(store, request.after, deliveries)) continue;
        failing.push([reader, deliveries]);
        if (failing.length > this.retry.maxFailingReaders) throw failure;
      }
      if (failing.length === byReader.size) throw failure;
      for (const [reader, deliveries] of failing) {
        for (const delivery of deliveries) await this.applyOrDeadLetter(store, request, reader, delivery);
      }
    } catch (error) {
      if (error instanceof FenceMovedError) return { applied: false, position: error.position };
      throw error;
    }
    if (request.position === request.after) return { applied: true, position: request.after };
    return store.deliver({ after: request.after, position: request.position, deliveries: [] });
  }

  /** Whether the deliveries applied, fenced at `after` and leaving the position there. */
  private async applies(store: TimelineStore, after: number, deliveries: TimelineDelivery[]): Promise<boolean> {
    let reply: DeliverReply;
    try {
      reply = await store.deliver({ after, position: after, deliveries });
    } catch (error) {
      if (isTransientFailure(error)) throw error;
      return false;
    }
    if (!reply.applied) throw new FenceMovedError(reply.position);
    return true;
  }

  private async applyOrDeadLetter(store: TimelineStore, request: DeliverRequest, reader: FeedId, delivery: TimelineDelivery): Promise<void> {
    let error: unknown;
    for (let attempt = 1; attempt <= this.retry.attempts; attempt++) {
      if (attempt > 1) await this.pause(this.retry.firstBackoffMs * 2 ** (attempt - 2));
      try {
        const reply = await store.deliver({ after: request.after, position: request.after, deliveries: [delivery] });
        if (!reply.applied) throw new FenceMovedError(reply.position);
        return;
      } catch (failure) {
        if (failure instanceof FenceMovedError || isTransientFailure(failure)) throw failure;
        error = failure;
      }
    }
    const failure: ReaderFailure = { reader, position: delivery.eventPosition ?? request.position, reason: describe(error), attempts: this.retry.attempts };
    await this.deadLetters.append(failure);
    this.letters++;
    readerDeadLetters.inc();
    this.logger.error(`dead-lettered the ${delivery.kind} at position ${failure.position} for ${reader} after ${failure.attempts} attempts: ${failure.reason}`);
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
