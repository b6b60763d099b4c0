import type { AppendOptions, AppendResult, EventLog, NewEvent, SubscribeOptions, Subscription, RecordedEvent } from '@feedmill/event-log';
import { metrics } from '@feedmill/observability';

/**
 * An event log whose appends are measured: how long each took until the log acknowledged
 * it, and how many events it held, labelled with the log's kind. The adapters stay free of
 * metrics; the labelled series are bound once here, so an append costs two observations.
 */
export class MeasuredEventLog implements EventLog {
  private readonly duration;
  private readonly events;

  constructor(
    private readonly log: EventLog,
    kind: string,
  ) {
    this.duration = metrics.logAppendDuration.labels(kind);
    this.events = metrics.logAppendEvents.labels(kind);
  }

  async appendToStream(stream: string, events: readonly NewEvent[], options?: AppendOptions): Promise<AppendResult> {
    const started = performance.now();
    const result = await this.log.appendToStream(stream, events, options);
    this.duration.observe((performance.now() - started) / 1000);
    this.events.observe(events.length);
    return result;
  }

  readStream(stream: string): Promise<RecordedEvent[]> {
    return this.log.readStream(stream);
  }

  subscribeToAll(options: SubscribeOptions): Subscription {
    return this.log.subscribeToAll(options);
  }

  get openSubscriptions(): number {
    return this.log.openSubscriptions;
  }

  get soleWriter(): boolean | undefined {
    return this.log.soleWriter;
  }

  headPosition(): Promise<number> {
    return this.log.headPosition();
  }

  saveCheckpoint(consumer: string, position: number): Promise<void> {
    return this.log.saveCheckpoint(consumer, position);
  }

  loadCheckpoint(consumer: string): Promise<number | undefined> {
    return this.log.loadCheckpoint(consumer);
  }

  close(): Promise<void> {
    return this.log.close();
  }
}
