import { feedEvents, type FeedLogEvent } from '@feedmill/contracts';
import { WrongExpectedVersionError, type EventLog } from '@feedmill/event-log';
import type { Projection } from '@feedmill/stores';

/** A projection that also knows the revision of each stream it applied. */
export interface RevisionedProjection extends Projection {
  streamRevision(stream: string): Promise<number>;
}

/** An append that is queued in the log: `durable` settles once it is on disk and applied here, with its position. */
export interface QueuedAppend {
  durable: Promise<number>;
}

/**
 * The write side of a service whose decisions read its own projection: append with the
 * revision the projection holds (optimistic concurrency), then apply the event to the
 * projection at once so the next command and the next read see it.
 */
export class ProjectionWriter {
  /** Revision of the newest append queued per stream and not yet applied here. */
  private readonly queued = new Map<string, number>();

  constructor(
    private readonly log: EventLog,
    private readonly projection: RevisionedProjection,
    /** @defaultValue 3 */
    private readonly maxConflictRetries = 3,
  ) {}

  /** Appends and waits until the event is durable and applied; returns its log position. */
  async append(stream: string, event: FeedLogEvent): Promise<number> {
    return (await this.enqueue(stream, event)).durable;
  }

  /**
   * Queues an append that expects the revision after every append this writer queued to
   * the stream before, so that several appends to one stream share a group commit. Call it
   * from the stream's serial section and await `durable` outside it. Appends to one stream
   * become durable in the order they were queued.
   */
  async enqueue(stream: string, event: FeedLogEvent): Promise<QueuedAppend> {
    const revision = this.queued.get(stream) ?? (await this.projection.streamRevision(stream));
    const encoded = feedEvents.encode(event);
    const appended = this.log.appendToStream(stream, [encoded], {
      expectedVersion: revision === -1 ? 'no_stream' : revision,
    });
    const mine = revision + 1;
    this.queued.set(stream, mine);
    const durable = appended
      .then(async (result) => {
        // Part of it reads as erased: the projection takes it as the log gives it, from its reader.
        if (result.contentErased) {
          await this.projection.reach(result.position);
          return result.position;
        }
        await this.projection.applyOwn(
          {
            stream,
            revision: result.nextExpectedVersion,
            position: result.position,
            ...encoded,
            recordedAt: new Date().toISOString(),
          },
          event,
        );
        return result.position;
      })
      .finally(() => {
        // The last queued append of the stream is applied (or failed): decide on the projection again.
        if (this.queued.get(stream) === mine) this.queued.delete(stream);
      });
    // The caller awaits `durable` once it leaves the serial section; until then a failure
    // must not count as unhandled.
    durable.catch(() => undefined);
    return { durable };
  }

  /**
   * Runs decide-and-append; when another writer moved the stream, catches up and decides
   * again, up to `retries` times. @defaultValue the writer's `maxConflictRetries`
   */
  async decideWithRetry<T>(decideAndAppend: () => Promise<T>, retries = this.maxConflictRetries): Promise<T> {
    for (let tries = 1; ; tries++) {
      try {
        return await decideAndAppend();
      } catch (error) {
        if (!(error instanceof WrongExpectedVersionError) || tries > retries) throw error;
        await this.caughtUp();
      }
    }
  }

  /** Waits until the projection has applied everything the log held when called, other writers' events included. */
  async caughtUp(): Promise<void> {
    await this.projection.reach(await this.log.headPosition());
  }
}
