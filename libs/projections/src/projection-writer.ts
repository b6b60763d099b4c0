import { currentEventVersion, type FeedEvent } from '@feedmill/contracts';
import { WrongExpectedVersionError, type EventLog } from '@feedmill/event-log';
import type { Projection } from '@feedmill/stores';

/** A projection that also knows the revision of each stream it applied. */
export interface RevisionedProjection extends Projection {
  streamRevision(stream: string): Promise<number>;
}

/**
 * The write side of a service whose decisions read its own projection: append with the
 * revision the projection holds (optimistic concurrency), then apply the event to the
 * projection at once so the next command and the next read see it.
 */
export class ProjectionWriter {
  constructor(
    private readonly log: EventLog,
    private readonly projection: RevisionedProjection,
    /** @defaultValue 3 */
    private readonly maxConflictRetries = 3,
  ) {}

  async append(stream: string, event: FeedEvent): Promise<void> {
    const revision = await this.projection.streamRevision(stream);
    const metadata = { v: currentEventVersion[event.type] };
    const result = await this.log.appendToStream(stream, [{ type: event.type, data: event.data, metadata }], {
      expectedVersion: revision === -1 ? 'no_stream' : revision,
    });
    await this.projection.applyOwn({
      stream,
      revision: result.nextExpectedVersion,
      position: result.position,
      type: event.type,
      data: event.data,
      metadata,
      recordedAt: new Date().toISOString(),
    });
  }

  /** Runs decide-and-append; when another writer moved the stream, catches up and decides again. */
  async decideWithRetry<T>(decideAndAppend: () => Promise<T>): Promise<T> {
    for (let tries = 1; ; tries++) {
      try {
        return await decideAndAppend();
      } catch (error) {
        if (!(error instanceof WrongExpectedVersionError) || tries > this.maxConflictRetries) throw error;
        await this.projection.reach(await this.log.headPosition());
      }
    }
  }
}
