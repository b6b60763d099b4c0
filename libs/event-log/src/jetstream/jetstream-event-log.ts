import { headers as natsHeaders, type NatsConnection } from '@nats-io/transport-node';
import { closeNats, connectNats } from './nats-connection.js';
import { InboxRequests, NoResponderError } from './inbox-requests.js';
import {
  DeliverPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  jetstream,
  jetstreamManager,
  type JetStreamClient,
  type JetStreamManager,
  type JsMsg,
} from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import { assertConsumerName, assertExpectedVersion, EventLogClosedError, LogAppendRefusedError, PushStreamEndedError, PushStreamStalledError, WrongExpectedVersionError } from '../errors.js';
import type {
  AppendOptions,
  AppendResult,
  EventLog,
  NewEvent,
  RecordedEvent,
  SubscribeOptions,
  Subscription,
} from '../event-log.port.js';
import { bufferedSubscription, PUSH_STREAM_QUIET_MS, tracked } from '../subscription-loop.js';
import type { StoredRecord } from '../stored-record.js';

export interface JetStreamEventLogOptions {
  /** @defaultValue `nats://127.0.0.1:4222` */
  servers?: string | string[];
  /** JetStream stream that holds the log; its subjects are `<name>.<stream>`. @defaultValue `FEEDMILL` */
  streamName?: string;
  /** Replicas of the stream and the checkpoint bucket on a clustered server. @defaultValue 1 */
  replicas?: number;
  /** An existing connection to use instead of opening one (it is then not closed by {@link JetStreamEventLog.close}). */
  connection?: NatsConnection;
}


const STREAM_NAME_PATTERN = /^[A-Za-z0-9_:-]{1,255}$/;
const MAX_APPEND_ATTEMPTS = 5;
/** How long a publish waits for JetStream's acknowledgement: nats.js's default for JetStream requests. */
const PUBLISH_TIMEOUT_MS = 5_000;

/**
 * The log on a NATS JetStream stream: one subject per event stream, the stream sequence as
 * the global position, and JetStream's expected-last-subject-sequence header for
 * optimistic concurrency. A multi-event append is a chain of conditional publishes: each
 * event is durable on its own, and a crash can leave a prefix of the chain.
 */
export class JetStreamEventLog implements EventLog {
  /** Stream revision and subject sequence of each stream's last event seen by this client. */
  private readonly tails = new Map<string, { revision: number; seq: number }>();
  private readonly subscriptions = new Set<Subscription>();
  /** The last append queued per stream, so that the next waits for it. */
  private readonly appending = new Map<string, Promise<unknown>>();
  private closed = false;
  /** Publishes and their acknowledgements, on one inbox (see `publishAcked`). */
  private readonly publishes: InboxRequests;

  private constructor(
    private readonly nc: NatsConnection,
    private readonly ownsConnection: boolean,
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
    private readonly streamName: string,
    private readonly checkpoints: KV,
  ) {
    this.publishes = new InboxRequests(nc);
  }

  static async connect(options: JetStreamEventLogOptions = {}): Promise<JetStreamEventLog> {
    const nc = options.connection ?? (await connectNats({ servers: options.servers ?? 'nats://127.0.0.1:4222' }));
    const streamName = options.streamName ?? 'FEEDMILL';
    const replicas = options.replicas ?? 1;
    const jsm = await jetstreamManager(nc);
    try {
      await jsm.streams.info(streamName);
    } catch (error) {
      if (!(error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamNotFound)) throw error;
      await jsm.streams.add({ name: streamName, subjects: [`${streamName}.>`], num_replicas: replicas });
    }
    const checkpoints = await new Kvm(nc).create(`${streamName}_checkpoints`, { replicas, history: 1 });
    return new JetStreamEventLog(nc, options.connection === undefined, jetstream(nc), jsm, streamName, checkpoints);
  }

  private subjectOf(stream: string): string {
    if (!STREAM_NAME_PATTERN.test(stream)) throw new Error(`stream name ${JSON.stringify(stream)} must match ${STREAM_NAME_PATTERN}`);
    return `${this.streamName}.${stream}`;
  }

  /** Reads the stream's last event from the server: the truth when the cached tail is stale. */
  private async fetchTail(stream: string): Promise<{ revision: number; seq: number }> {
    const message = await this.jsm.streams.getMessage(this.streamName, { last_by_subj: this.subjectOf(stream) });
    const tail = message ? { revision: (message.json<StoredRecord>()).r, seq: message.seq } : { revision: -1, seq: 0 };
    this.tails.set(stream, tail);
    return tail;
  }

  /**
   * Appends to one stream are published one after another: each names the sequence of the
   * one before it, which is known only once that one is acknowledged.
   */
  appendToStream(stream: string, events: readonly NewEvent[], options: AppendOptions = {}): Promise<AppendResult> {
    const previous = this.appending.get(stream) ?? Promise.resolve();
    const result = previous.then(() => this.publish(stream, events, options));
    const settled = result.catch(() => undefined);
    this.appending.set(stream, settled);
    void settled.then(() => {
      if (this.appending.get(stream) === settled) this.appending.delete(stream);
    });
    return result;
  }

  private async publish(stream: string, events: readonly NewEvent[], options: AppendOptions): Promise<AppendResult> {
    if (this.closed) throw new EventLogClosedError();
    if (events.length === 0) throw new Error('appendToStream needs at least one event');
    const subject = this.subjectOf(stream);
    const expected = options.expectedVersion ?? 'any';
    let tail = this.tails.get(stream) ?? (await this.fetchTail(stream));
    for (let attempt = 1; ; attempt++) {
      // A cached tail may be stale when another client wrote: check against the server then.
      if (expected !== 'any' && expected !== (tail.revision === -1 ? 'no_stream' : tail.revision)) {
        tail = await this.fetchTail(stream);
        assertExpectedVersion(stream, expected, tail.revision);
      }
      try {
        let { revision, seq } = tail;
        const recordedAt = new Date().toISOString();
        for (const event of events) {
          revision += 1;
          const record: StoredRecord = { s: stream, r: revision, t: event.type, d: event.data, m: event.metadata ?? {}, at: recordedAt };
          seq = await this.publishAcked(subject, JSON.stringify(record), event.type, seq);
        }
        this.tails.set(stream, { revision, seq });
        return { nextExpectedVersion: revision, position: seq };
      } catch (error) {
        if (!(error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamWrongLastSequence)) throw error;
        tail = await this.fetchTail(stream);
        if (expected !== 'any') throw new WrongExpectedVersionError(stream, expected, tail.revision);
        if (attempt >= MAX_APPEND_ATTEMPTS) throw error;
      }
    }
  }

  /**
   * Publishes a record that JetStream stores only if the subject's last message is at
   * `lastSubjectSequence`, and returns the record's sequence once stored. The acknowledgement is
   * read here rather than by nats.js's `js.publish`, whose request makes an error with its stack
   * trace for every publish it completes (a twentieth of content's CPU per post).
   */
  private async publishAcked(subject: string, payload: string, type: string, lastSubjectSequence: number): Promise<number> {
    const headers = natsHeaders();
    headers.set('Feedmill-Type', type);
    headers.set('Nats-Expected-Last-Subject-Sequence', String(lastSubjectSequence));
    let reply;
    try {
      reply = await this.publishes.request(subject, payload, PUBLISH_TIMEOUT_MS, headers);
    } catch (error) {
      if (error instanceof NoResponderError) throw new Error(`no JetStream stream stores ${subject}: is JetStream enabled, and the stream ${this.streamName} there?`, { cause: error });
      throw error;
    }
    const ack = reply.json<{ stream?: string; seq?: number; error?: { code: number; err_code: number; description: string } }>();
    if (ack.error) {
      const refused = new JetStreamApiError(ack.error);
      // A stale expected sequence is the caller's to retry; anything else stored nothing (a full store, a limit).
      if (refused.code === JetStreamApiCodes.StreamWrongLastSequence) throw refused;
      throw new LogAppendRefusedError(refused.message, { cause: refused });
    }
    if (typeof ack.seq !== 'number' || !ack.stream) throw new Error(`JetStream answered a publish to ${subject} with no sequence: ${reply.string()}`);
    return ack.seq;
  }

  async readStream(stream: string): Promise<RecordedEvent[]> {
    const tail = await this.fetchTail(stream);
    if (tail.revision === -1) return [];
    const consumer = await this.js.consumers.get(this.streamName, {
      filter_subjects: this.subjectOf(stream),
      deliver_policy: DeliverPolicy.All,
    });
    const events: RecordedEvent[] = [];
    const messages = await consumer.consume({ max_messages: 256 });
    // A consumer lost in a server's restart may give nothing more without failing: the read
    // fails then, rather than wait for good, and the caller tries again.
    let quiet: NodeJS.Timeout | undefined;
    let stalled = false;
    const listen = () => {
      clearTimeout(quiet);
      quiet = setTimeout(() => {
        stalled = true;
        void messages.close();
      }, PUSH_STREAM_QUIET_MS);
    };
    let last = 0;
    try {
      listen();
      for await (const message of messages) {
        listen();
        events.push(toRecorded(message));
        last = message.seq;
        if (message.seq >= tail.seq) break;
      }
    } finally {
      clearTimeout(quiet);
      await messages.close();
      await consumer.delete().catch(() => undefined);
    }
    if (stalled) throw new PushStreamStalledError(last, tail.seq, PUSH_STREAM_QUIET_MS);
    if (last < tail.seq) throw new PushStreamEndedError(last);
    return events;
  }

  subscribeToAll(options: SubscribeOptions): Subscription {
    const subscription = bufferedSubscription(options, {
      open: async (from) => {
        const consumer = await this.js.consumers.get(this.streamName, { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: from + 1 });
        const messages = await consumer.consume({ max_messages: 1024 });
        return { events: mapMessages(messages), close: () => messages.close().then(() => undefined) };
      },
      headPosition: () => this.headPosition(),
      // An ordered consumer can stall after the server's restart without saying so.
      quietMs: PUSH_STREAM_QUIET_MS,
    });
    return tracked(subscription, this.subscriptions);
  }

  get openSubscriptions(): number {
    return this.subscriptions.size;
  }

  async headPosition(): Promise<number> {
    const info = await this.jsm.streams.info(this.streamName);
    return info.state.last_seq;
  }

  async saveCheckpoint(consumer: string, position: number): Promise<void> {
    assertConsumerName(consumer);
    await this.checkpoints.put(consumer, JSON.stringify({ position }));
  }

  async loadCheckpoint(consumer: string): Promise<number | undefined> {
    assertConsumerName(consumer);
    const entry = await this.checkpoints.get(consumer);
    if (!entry || entry.operation !== 'PUT') return undefined;
    return (entry.json<{ position: number }>()).position;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.subscriptions].map((s) => s.stop()));
    // Appends under way get their acknowledgements before the inbox goes.
    await Promise.all(this.appending.values());
    if (this.ownsConnection) await closeNats(this.nc);
    else this.publishes.close();
  }
}

function toRecorded(message: JsMsg): RecordedEvent {
  const record = message.json<StoredRecord>();
  return { stream: record.s, revision: record.r, position: message.seq, type: record.t, data: record.d, metadata: record.m, recordedAt: record.at };
}


async function* mapMessages(messages: AsyncIterable<JsMsg>): AsyncIterable<RecordedEvent> {
  for await (const message of messages) yield toRecorded(message);
}
