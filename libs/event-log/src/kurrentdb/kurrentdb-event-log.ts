import {
  ANY,
  BACKWARDS,
  excludeSystemEvents,
  FORWARDS,
  jsonEvent,
  KurrentDBClient,
  NO_STREAM,
  START,
  StreamNotFoundError,
  streamNameFilter,
  WrongExpectedVersionError as KurrentWrongExpectedVersionError,
  type AllStreamResolvedEvent,
  type ReadPosition,
  type ResolvedEvent,
  type StreamState,
} from '@kurrent/kurrentdb-client';
import { assertConsumerName, EventLogClosedError, WrongExpectedVersionError } from '../errors.js';
import type {
  AppendOptions,
  AppendResult,
  EventLog,
  ExpectedVersion,
  NewEvent,
  RecordedEvent,
  SubscribeOptions,
  Subscription,
} from '../event-log.port.js';
import { bufferedSubscription, tracked } from '../subscription-loop.js';

export interface KurrentEventLogOptions {
  /** For example `kurrentdb://localhost:2113?tls=false`. */
  connectionString: string;
  /**
   * Prefix of every stream this log writes and reads, so that several logs (or test runs)
   * can share one database. @defaultValue '' (every non-system stream)
   */
  namespace?: string;
}

const CHECKPOINTS = 'feedmill-checkpoint-';

/**
 * The log on KurrentDB (EventStoreDB): streams and revisions are KurrentDB's own, and the
 * global position is the commit position in its transaction file (increasing, with gaps).
 * Checkpoints are kept in stream metadata, which subscriptions to `$all` leave out.
 */
export class KurrentEventLog implements EventLog {
  private readonly subscriptions = new Set<Subscription>();
  private closed = false;

  private constructor(
    private readonly client: KurrentDBClient,
    private readonly namespace: string,
  ) {}

  static async connect(options: KurrentEventLogOptions): Promise<KurrentEventLog> {
    const log = new KurrentEventLog(KurrentDBClient.connectionString(options.connectionString), options.namespace ?? '');
    await log.headPosition(); // fails now, not at the first append, when the server is unreachable
    return log;
  }

  async appendToStream(stream: string, events: readonly NewEvent[], options: AppendOptions = {}): Promise<AppendResult> {
    if (this.closed) throw new EventLogClosedError();
    if (events.length === 0) throw new Error('appendToStream needs at least one event');
    const expected = options.expectedVersion ?? 'any';
    try {
      const result = await this.client.appendToStream(
        this.namespace + stream,
        events.map((event) => jsonEvent({ type: event.type, data: event.data as never, metadata: (event.metadata ?? {}) as never })),
        { streamState: toStreamState(expected) },
      );
      return { nextExpectedVersion: Number(result.nextExpectedRevision), position: Number(result.position?.commit ?? 0n) };
    } catch (error) {
      if (error instanceof KurrentWrongExpectedVersionError) {
        const actual = error.actualState === NO_STREAM ? -1 : Number(error.actualState);
        throw new WrongExpectedVersionError(stream, expected, actual);
      }
      throw error;
    }
  }

  async readStream(stream: string): Promise<RecordedEvent[]> {
    const events: RecordedEvent[] = [];
    try {
      for await (const resolved of this.client.readStream(this.namespace + stream, { fromRevision: START, direction: FORWARDS })) {
        const recorded = this.toRecorded(resolved);
        if (recorded) events.push(recorded);
      }
    } catch (error) {
      if (error instanceof StreamNotFoundError) return [];
      throw error;
    }
    return events;
  }

  subscribeToAll(options: SubscribeOptions): Subscription {
    const subscription = bufferedSubscription(options, {
      open: async (from) => {
        const fromPosition: ReadPosition = from === 0 ? START : { commit: BigInt(from), prepare: BigInt(from) };
        const filter = this.namespace === '' ? excludeSystemEvents() : streamNameFilter({ prefixes: [this.namespace] });
        const source = this.client.subscribeToAll({ fromPosition, filter });
        const toRecorded = (resolved: AllStreamResolvedEvent) => this.toRecorded(resolved);
        return { events: recordedOnly(source, toRecorded), close: () => source.unsubscribe() };
      },
      headPosition: () => this.headPosition(),
    });
    return tracked(subscription, this.subscriptions);
  }

  /** Commit position of the newest event of this log (system events and other namespaces aside). */
  get openSubscriptions(): number {
    return this.subscriptions.size;
  }

  async headPosition(): Promise<number> {
    for await (const resolved of this.client.readAll({ fromPosition: 'end', direction: BACKWARDS, maxCount: 10_000 })) {
      if (this.toRecorded(resolved)) return Number(resolved.event!.position.commit);
    }
    return 0;
  }

  async saveCheckpoint(consumer: string, position: number): Promise<void> {
    assertConsumerName(consumer);
    await this.client.setStreamMetadata(`${this.namespace}${CHECKPOINTS}${consumer}`, { position });
  }

  async loadCheckpoint(consumer: string): Promise<number | undefined> {
    assertConsumerName(consumer);
    let position: unknown;
    try {
      position = (await this.client.getStreamMetadata(`${this.namespace}${CHECKPOINTS}${consumer}`)).metadata?.['position'];
    } catch (error) {
      if (error instanceof StreamNotFoundError) return undefined;
      throw error;
    }
    return typeof position === 'number' ? position : undefined;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.subscriptions].map((s) => s.stop()));
    await this.client.dispose();
  }

  /** Our view of a stored event; undefined for system events and other namespaces. */
  private toRecorded(resolved: ResolvedEvent | AllStreamResolvedEvent): RecordedEvent | undefined {
    const event = resolved.event;
    if (!event || !event.isJson || event.type.startsWith('$') || event.streamId.startsWith('$')) return undefined;
    if (!event.streamId.startsWith(this.namespace)) return undefined;
    return {
      stream: event.streamId.slice(this.namespace.length),
      revision: Number(event.revision),
      position: Number(event.position?.commit ?? 0n),
      type: event.type,
      data: event.data,
      metadata: (event.metadata ?? {}) as Record<string, unknown>,
      recordedAt: event.created.toISOString(),
    };
  }
}

function toStreamState(expected: ExpectedVersion): StreamState {
  if (expected === 'any') return ANY;
  if (expected === 'no_stream') return NO_STREAM;
  return BigInt(expected);
}

async function* recordedOnly(
  source: AsyncIterable<AllStreamResolvedEvent>,
  toRecorded: (resolved: AllStreamResolvedEvent) => RecordedEvent | undefined,
): AsyncIterable<RecordedEvent> {
  for await (const resolved of source) {
    const recorded = toRecorded(resolved);
    if (recorded) yield recorded;
  }
}
