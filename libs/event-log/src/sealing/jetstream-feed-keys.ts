import type { NatsConnection } from '@nats-io/transport-node';
import { closeNats, connectNats } from '../jetstream/nats-connection.js';
import { JetStreamApiCodes, JetStreamApiError, jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import type { FeedId } from '@feedmill/contracts';
import { LogAppendRefusedError } from '../errors.js';
import type { FeedKeyStore } from './feed-keys.port.js';
import { newFeedKey, type FeedKey, type FeedKeyRef } from './sealed-content.js';

export interface JetStreamFeedKeyStoreOptions {
  /** @defaultValue `nats://127.0.0.1:4222` */
  servers?: string | string[];
  /** The KV bucket of the keys. @defaultValue `FEEDMILL_feed_keys` */
  bucket?: string;
  /** @defaultValue 1 */
  replicas?: number;
}

/**
 * Feeds' keys in a JetStream KV bucket, one entry per key, `<group>.<id>.<key id>` (a feed
 * id's characters are those of KV tokens once its colon is a dot), and one per key an erasure
 * marked, `<group>.<id>.<key id>.destroying`. `kv.create` returns once
 * JetStream stored the key, as an append to the log does. Destroying a key deletes its
 * message from the bucket's stream with `erase` (JetStream overwrites the bytes): a KV
 * delete or purge only adds a marker and leaves the value in the stream's block files.
 *
 * Keys are read from the stream's leader, never by direct get: with replicas, a direct get
 * may be answered by a replica that has not yet stored a key just created, and a key read
 * as missing makes its content read as erased.
 */
export class JetStreamFeedKeyStore implements FeedKeyStore {
  private constructor(
    private readonly nc: NatsConnection,
    private readonly jsm: JetStreamManager,
    private readonly kv: KV,
    private readonly bucket: string,
  ) {}

  static async connect(options: JetStreamFeedKeyStoreOptions = {}): Promise<JetStreamFeedKeyStore> {
    const nc = await connectNats({ servers: options.servers ?? 'nats://127.0.0.1:4222' });
    const bucket = options.bucket ?? 'FEEDMILL_feed_keys';
    // allow_direct: false also makes this client read by leader from a bucket created with direct gets allowed.
    const kv = await new Kvm(nc).create(bucket, { history: 1, replicas: options.replicas ?? 1, allow_direct: false });
    return new JetStreamFeedKeyStore(nc, await jetstreamManager(nc), kv, bucket);
  }

  async currentKeys(feeds: readonly FeedId[]): Promise<Map<FeedId, FeedKey>> {
    const keys = new Map<FeedId, FeedKey>();
    await Promise.all(
      [...new Set(feeds)].map(async (feed) => {
        const [existing] = await this.keysOf(feed);
        if (existing) {
          keys.set(feed, existing);
          return;
        }
        const key = newFeedKey(feed);
        await this.kv.create(entryOf(key), key.secret.toString('base64')).catch((error: unknown) => {
          // Out of storage, or past a limit: nothing is sealed with a key that was not kept.
          throw error instanceof JetStreamApiError ? new LogAppendRefusedError(`the feed key store could not keep a new key: ${error.message}`, { cause: error }) : error;
        });
        keys.set(feed, key);
      }),
    );
    return keys;
  }

  async keysOf(feed: FeedId): Promise<FeedKey[]> {
    // The subjects the stream holds a message on: keys are only ever removed with their
    // message, so these are the feed's keys. One request, where the KV's own key listing opens
    // a consumer that waits for a heartbeat (5 s or far longer) when a key it counted is
    // destroyed before it is delivered.
    const prefix = `$KV.${this.bucket}.${tokensOf(feed)}.`;
    const info = await this.jsm.streams.info(`KV_${this.bucket}`, { subjects_filter: `${prefix}*` });
    const ids = Object.keys(info.state.subjects ?? {}).map((subject) => subject.slice(prefix.length));
    // The oldest id first is not known; any order that every process reads alike will do.
    ids.sort();
    return [...(await this.find(ids.map((id) => ({ feed, id })))).values()];
  }

  async find(refs: readonly FeedKeyRef[]): Promise<Map<string, FeedKey>> {
    const found = new Map<string, FeedKey>();
    await Promise.all(
      refs.map(async ({ feed, id }) => {
        const entry = await this.kv.get(entryOf({ feed, id }));
        if (entry && entry.operation === 'PUT' && entry.length > 0) found.set(id, { id, feed, secret: Buffer.from(entry.string(), 'base64') });
      }),
    );
    return found;
  }

  async markDestroying(refs: readonly FeedKeyRef[]): Promise<void> {
    await Promise.all(refs.map((ref) => this.kv.put(markOf(ref), '1')));
  }

  async marked(refs: readonly FeedKeyRef[]): Promise<Map<string, number>> {
    const marked = new Map<string, number>();
    await Promise.all(
      refs.map(async (ref) => {
        const entry = await this.kv.get(markOf(ref));
        if (entry && entry.operation === 'PUT') marked.set(ref.id, entry.created.getTime());
      }),
    );
    return marked;
  }

  async destroy(refs: readonly FeedKeyRef[]): Promise<void> {
    // The key first: a crash between the two leaves a mark of a key that is gone, which marks nothing.
    await Promise.all(refs.map((ref) => this.erase(entryOf(ref))));
    await Promise.all(refs.map((ref) => this.erase(markOf(ref))));
  }

  /** Deletes the entry's message, overwriting its bytes; one already gone is passed over. */
  private async erase(entry: string): Promise<void> {
    const stream = `KV_${this.bucket}`;
    let seq: number | undefined;
    try {
      seq = (await this.jsm.streams.getMessage(stream, { last_by_subj: `$KV.${this.bucket}.${entry}` }))?.seq;
    } catch (error) {
      if (isNoMessage(error)) return; // already gone
      throw error;
    }
    if (seq === undefined) return;
    try {
      await this.jsm.streams.deleteMessage(stream, seq, true);
    } catch (error) {
      // Another process destroyed it between the two calls: it is gone all the same.
      if (!isNoMessage(error)) throw error;
    }
  }

  async close(): Promise<void> {
    await closeNats(this.nc);
  }
}

function tokensOf(feed: FeedId): string {
  return feed.replace(':', '.');
}

function entryOf(ref: FeedKeyRef): string {
  return `${tokensOf(ref.feed)}.${ref.id}`;
}

/** A key's mark: one token more than a key's entry, so that listing a feed's keys (`<group>.<id>.*`) never meets it. */
function markOf(ref: FeedKeyRef): string {
  return `${entryOf(ref)}.destroying`;
}

/** Stream message delete's failure code, whose description says why. */
const MESSAGE_DELETE_FAILED = 10057;
/** What nats-server 2.9 answers a delete of a message that another request deleted a moment before ("sequence N not found"). */
const BAD_REQUEST = 10043;

/**
 * Whether JetStream answered that the message is not there: the only error that means a key
 * is already destroyed. Any other (no stream, no quorum, a timeout) fails the destroy.
 */
function isNoMessage(error: unknown): boolean {
  if (!(error instanceof JetStreamApiError)) return false;
  if (error.code === JetStreamApiCodes.NoMessageFound) return true;
  if (error.code === MESSAGE_DELETE_FAILED) return /no message found|message not found/i.test(error.message);
  return error.code === BAD_REQUEST && /^sequence \d+ not found$/i.test(error.message);
}
