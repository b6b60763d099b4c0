import type { FeedId } from '@feedmill/contracts';
import type { AppendOptions, AppendResult, EventLog, NewEvent, RecordedEvent, SubscribeOptions, Subscription } from '../event-log.port.js';
import type { FeedKeyStore } from './feed-keys.port.js';
import { feedsToSeal, openEventData, SEALED_EVENT_TYPES, sealedKeyRefs, sealEventData, tombstoneOf, type FeedKey, type FeedKeyRef } from './sealed-content.js';

/** Streams whose own last revision is remembered, at most: a stream forgotten checks its keys at its next append. */
const MOST_OWN_REVISIONS = 65_536;

/**
 * How long an import waits on a key an erasure marked, at most: an erasure destroys its keys
 * within milliseconds of marking them, unless it failed or crashed before its `FeedErased`
 * was appended (an attempt that lost its expected revision to a post is tried again, and
 * marks again), which leaves the mark and the key standing. Well under a gateway's 15 s
 * request timeout, so that an import held by a mark left behind is answered, not timed out.
 */
const STALE_MARK_MS = 10_000;
/** How often an import waiting on a marked key asks again. */
const MARK_POLL_MS = 25;

export interface SealedEventLogOptions {
  /** @defaultValue 10 s (`STALE_MARK_MS`) */
  staleMarkMs?: number;
}

/** Told once an erasure is durable and its keys destroyed (on append, and when a read meets one). */
export type ErasureListener = (erasure: { feed: FeedId; position: number }) => void;

interface FeedErasedData {
  feed: FeedId;
  time: string;
  keys?: string[];
}

/**
 * The log with activities' content sealed, one box per activity with its feed's
 * key (crypto-shredding): appends seal what users typed, reads open it, and a `FeedErased`
 * destroys the feed's keys once it is durable, after which every read of that content
 * gives a `ContentErased` tombstone in its place. Positions and stream revisions never
 * change, so a replay is as deterministic as before; events written before sealing existed
 * read as they were.
 *
 * Keys are cached: an append or a read whose keys are known does no other I/O. Appends to one
 * stream, and appends of one feed's content, keep the order they were called in (the writers
 * queue appends to one stream with consecutive expected revisions), also while a key is being
 * made; appends that share neither do not wait for each other.
 */
export class SealedEventLog implements EventLog {
  /** Keys by id; null for one an erasure seen here destroyed. */
  private readonly keys = new Map<string, FeedKey | null>();
  /** How many keys an erasure seen here destroyed. */
  private destroyedKeys = 0;
  /** The key each feed's new content is sealed with: never one an erasure seen here destroyed (see `learn`). */
  private readonly current = new Map<FeedId, FeedKey>();
  /** Per stream this log appended sealed content to: the revision its own appends end at (see `unfenced`). */
  private readonly ownRevisions = new Map<string, number>();
  /**
   * The plain data of each sealed data object this process sealed or opened. The file log
   * hands its subscribers the very object its appender gave it, and one decoded object to
   * every subscriber reading the same record, so a post this process appended is never
   * opened here, and a record read by several subscribers (content, graph, fan-out and
   * timeline in the standalone) is opened once, not once each. Weak: it lives as long as
   * the log keeps the record.
   */
  private readonly plainOf = new WeakMap<object, unknown>();
  /**
   * The turn of the last append that had to wait (for keys, a key check or an erasure's keys),
   * per lane: its stream (`s:`) and each feed whose content it seals or erases (`f:`). Later
   * appends sharing a lane wait behind it, so that a stream's appends keep their expected
   * revisions' order and a feed's content is sealed after the erasure called before it; the
   * others go on, so that a feed's first post, waiting for its key to be written, holds up
   * no other feed.
   */
  private readonly turns = new Map<string, Promise<void>>();
  /** Feeds whose keys the next write to the key store makes, and when that write is done. */
  private keyBatch: { feeds: Set<FeedId>; written: Promise<void> } | undefined;
  /** The write to the key store under way, if one is. */
  private keyWriting: Promise<void> = Promise.resolve();
  private readonly listeners: ErasureListener[] = [];

  private readonly staleMarkMs: number;

  constructor(
    private readonly inner: EventLog,
    private readonly keyStore: FeedKeyStore,
    options: SealedEventLogOptions = {},
  ) {
    this.staleMarkMs = options.staleMarkMs ?? STALE_MARK_MS;
  }

  /** Calls `listener` after each erasure. */
  onErased(listener: ErasureListener): void {
    this.listeners.push(listener);
  }

  get openSubscriptions(): number {
    return this.inner.openSubscriptions;
  }

  get soleWriter(): boolean | undefined {
    return this.inner.soleWriter;
  }

  appendToStream(stream: string, events: readonly NewEvent[], options?: AppendOptions): Promise<AppendResult> {
    // Every post goes through here: what it needs is worked out once, and the lanes only when some append waits.
    const erasures = events.filter((event) => event.type === 'FeedErased');
    const sealedFeeds = this.sealedFeedsOf(events);
    const lanesOf = () => [`s:${stream}`, ...sealedFeeds.map((feed) => `f:${feed}`), ...erasures.map((event) => `f:${(event.data as FeedErasedData).feed}`)];
    const before = this.turns.size > 0 ? lanesOf().flatMap((lane) => this.turns.get(lane) ?? []) : [];
    const recheck = this.unfenced(stream, events, options) ? sealedFeeds.filter((feed) => this.current.has(feed)) : [];
    const missing = this.missingKeys(sealedFeeds);
    if (before.length === 0 && missing.length === 0 && erasures.length === 0 && recheck.length === 0) return this.appendedInOrder(stream, this.sealed(events), options);
    const lanes = lanesOf();
    // The inner append is called in turn; its result is awaited outside the turn.
    const keysWritten = missing.length > 0 ? this.keysMade(missing) : undefined;
    const called = Promise.all(before).then(async () => {
      await keysWritten;
      if (recheck.length > 0) await this.forgetDestroyed(recheck);
      const filled = await Promise.all(events.map((event) => (event.type === 'FeedErased' ? this.withKeys(event) : event)));
      // Keys the check found destroyed, or that an erasure this log read meanwhile dropped, are
      // made anew: nothing is sealed with a key known to be gone. No wait comes after this one.
      for (let missing = this.missingKeys(sealedFeeds); missing.length > 0; missing = this.missingKeys(sealedFeeds)) await this.keysMade(missing);
      // An import, which its stream does not fence, may be sealed with a key an erasure
      // elsewhere destroys before it is durable: its keys are asked for again after it.
      const sealedWith = isImport(events) ? this.currentRefs(sealedFeeds) : [];
      return { appended: this.appendedInOrder(stream, this.sealed(filled), options), filled, sealedWith };
    });
    const done = called.then(async ({ appended, filled, sealedWith }): Promise<AppendResult> => {
      const result = await appended;
      for (const event of filled) if (event.type === 'FeedErased') await this.erased(event.data as FeedErasedData, result.position);
      if (sealedWith.length > 0 && !(await this.standOnceErasuresAreDone(sealedWith))) return { ...result, contentErased: true };
      return result;
    });
    // An erasure's turn lasts until its keys are destroyed: its feed's content appended after
    // it asks for a key once the old ones are gone from the store, so it is sealed with a new one.
    const turn = (erasures.length > 0 ? done : called).then(
      () => undefined,
      () => undefined,
    );
    for (const lane of lanes) this.turns.set(lane, turn);
    void turn.then(() => {
      for (const lane of lanes) if (this.turns.get(lane) === turn) this.turns.delete(lane);
    });
    return done;
  }

  /**
   * Whether an append of sealed content is not fenced by its stream against an erasure
   * elsewhere, so that the keys cached here must be asked for first. It is fenced only when it
   * follows this log's own appends to its stream (its expected revision is the one they end
   * at). It is not when it follows events another writer appended: on a feed's stream, one
   * of them may be an erasure that destroyed the key cached here, and a content replica
   * deciding on a store it shares with others (MongoDB) reads the erasure's revision there
   * before its own subscription has read the erasure, so the expected revision does not stop
   * it. Nor is an import: it goes to a new stream of its own, which no erasure can be in, so
   * its revision fences nothing, and without the check an import on a replica behind the log
   * would be sealed, and acknowledged, with a key an erasure already destroyed.
   */
  private unfenced(stream: string, events: readonly NewEvent[], options: AppendOptions | undefined): boolean {
    if (isImport(events)) return true;
    if (typeof options?.expectedVersion !== 'number' || !events.some((event) => SEALED_EVENT_TYPES.has(event.type))) return false;
    return this.ownRevisions.get(stream) !== options.expectedVersion;
  }

  /**
   * Calls the inner append, remembering the revision this log's appends to the stream end at
   * from the call on (appends to one stream are called in order, before earlier ones are
   * durable); a failed append forgets it, so the next one checks its keys again.
   */
  private appendedInOrder(stream: string, events: NewEvent[], options: AppendOptions | undefined): Promise<AppendResult> {
    const expected = options?.expectedVersion;
    // An import's stream is its own and checked anyway (see `unfenced`): not worth remembering.
    const sealsContent = !isImport(events) && events.some((event) => SEALED_EVENT_TYPES.has(event.type));
    if (sealsContent) {
      const end = typeof expected === 'number' ? expected + events.length : expected === 'no_stream' ? events.length - 1 : undefined;
      if (end === undefined) this.ownRevisions.delete(stream);
      else {
        // The first remembered goes first: forgetting one costs its stream a key check at its
        // next append, no more.
        if (this.ownRevisions.size >= MOST_OWN_REVISIONS && !this.ownRevisions.has(stream)) this.ownRevisions.delete(this.ownRevisions.keys().next().value!);
        this.ownRevisions.set(stream, end);
      }
    }
    const appended = this.inner.appendToStream(stream, events, options);
    if (sealsContent) appended.catch(() => this.ownRevisions.delete(stream));
    return appended;
  }

  /** The feeds of the sealed content in `events`. */
  private sealedFeedsOf(events: readonly NewEvent[]): FeedId[] {
    return events.flatMap((event) => (SEALED_EVENT_TYPES.has(event.type) ? feedsToSeal(event.type, event.data) : []));
  }

  /** The keys `feeds` are sealed with now. */
  private currentRefs(feeds: readonly FeedId[]): FeedKeyRef[] {
    return feeds.flatMap((feed) => {
      const key = this.current.get(feed);
      return key ? [{ feed, id: key.id }] : [];
    });
  }

  /**
   * Asks the key store whether the keys cached for `feeds` still exist, and stops sealing with
   * those it does not find (an erasure elsewhere destroyed them), so that new ones are made.
   * An erasure's keys are destroyed before its revision reaches any store a replica decides
   * on. The key itself is not marked destroyed: only an erasure read from the log says so (a
   * store may miss a key it holds), and a key still there is simply found again.
   */
  private async forgetDestroyed(feeds: readonly FeedId[]): Promise<void> {
    const refs = this.currentRefs(feeds);
    if (refs.length === 0) return;
    const standing = await this.keyStore.find(refs);
    for (const ref of refs) if (!standing.has(ref.id) && this.current.get(ref.feed)?.id === ref.id) this.current.delete(ref.feed);
  }

  /**
   * Makes keys for `feeds` in the next write to the key store: every append that misses a key
   * while one write is under way joins the one after it, so that the first posts of many new
   * feeds at once share one write (and one fsync), as the file log's appends share theirs,
   * instead of each waiting for its own with every append queued behind it.
   */
  private keysMade(feeds: readonly FeedId[]): Promise<void> {
    if (!this.keyBatch) {
      const batch = new Set<FeedId>();
      const written = this.keyWriting.then(async () => {
        // Closed from here on: feeds missing a key now go to the next write.
        if (this.keyBatch?.feeds === batch) this.keyBatch = undefined;
        for (const [feed, key] of await this.keyStore.currentKeys([...batch])) this.learn(feed, key);
      });
      this.keyBatch = { feeds: batch, written };
      this.keyWriting = written.catch(() => undefined);
    }
    for (const feed of feeds) this.keyBatch.feeds.add(feed);
    return this.keyBatch.written;
  }

  async readStream(stream: string): Promise<RecordedEvent[]> {
    return this.opened(await this.inner.readStream(stream));
  }

  subscribeToAll(options: SubscribeOptions): Subscription {
    return this.inner.subscribeToAll({ ...options, onEvents: async (records) => options.onEvents(await this.opened(records)) });
  }

  headPosition(): Promise<number> {
    return this.inner.headPosition();
  }

  saveCheckpoint(consumer: string, position: number): Promise<void> {
    return this.inner.saveCheckpoint(consumer, position);
  }

  loadCheckpoint(consumer: string): Promise<number | undefined> {
    return this.inner.loadCheckpoint(consumer);
  }

  async close(): Promise<void> {
    await Promise.all(this.turns.values());
    await this.inner.close();
    await this.keyStore.close();
  }

  /** Of `feeds`, those this log has no key to seal with. */
  private missingKeys(feeds: readonly FeedId[]): FeedId[] {
    return feeds.filter((feed) => !this.current.has(feed));
  }

  private sealed(events: readonly NewEvent[]): NewEvent[] {
    return events.map((event) => {
      if (!SEALED_EVENT_TYPES.has(event.type)) return event;
      const data = sealEventData(event.type, event.data, (feed) => this.current.get(feed)!) as object;
      this.plainOf.set(data, event.data);
      return { ...event, data };
    });
  }

  /**
   * Seals `feed`'s new content with `key` from now on. A key an erasure seen here destroyed is
   * not taken back: the store hands out a feed's key until its destroy begins, so a post called
   * during an erasure may ask for it before and be answered after. Such a feed, or one the
   * store's answer has no key for, stays without one, and its append asks again.
   */
  private learn(feed: FeedId, key: FeedKey | undefined): void {
    if (!key || this.keys.get(key.id) === null) return;
    this.current.set(feed, key);
    this.keys.set(key.id, key);
  }

  /**
   * Whether the keys an import was sealed with stand, once the erasures that marked them (if
   * any) are done. Its stream orders an import against no erasure: an erasure on another
   * replica may be appended before it and destroy the keys it was sealed with after it is
   * durable, so that the log reads it as a tombstone while this replica would serve it whole.
   * An erasure marks its keys before it is appended, so a check that finds a key standing and
   * unmarked comes before the erasure is appended, and the import before the erasure, which
   * removes it from every projection anyway. A marked key is waited on until it is destroyed
   * (the erasure was appended) or its mark is stale (the erasure crashed before it was).
   */
  private async standOnceErasuresAreDone(refs: readonly FeedKeyRef[]): Promise<boolean> {
    const started = Date.now();
    for (;;) {
      // Marks first: an erasure removes a key before its mark, so no key reads as standing and unmarked in between.
      const marked = await this.keyStore.marked(refs);
      if ((await this.keyStore.find(refs)).size < refs.length) return false;
      const now = Date.now();
      if (now - started >= this.staleMarkMs || ![...marked.values()].some((at) => now - at < this.staleMarkMs)) return true;
      await new Promise((resolve) => setTimeout(resolve, MARK_POLL_MS));
    }
  }

  /** A `FeedErased` naming every key its feed has now, marked: those are destroyed once it is durable. */
  private async withKeys(event: NewEvent): Promise<NewEvent> {
    const data = event.data as FeedErasedData;
    const found = await this.keyStore.keysOf(data.feed);
    if (found.length > 0) await this.keyStore.markDestroying(found);
    const keys = found.map((key) => key.id);
    // New content of the feed after this is sealed with a new key.
    this.current.delete(data.feed);
    return { ...event, data: { ...data, keys } };
  }

  /**
   * The keys a record's boxes name, as they stand now: a record opened later (its data read
   * after an erasure further on destroyed them) opens as it was classified here.
   */
  private keysHeldNow(refs: readonly FeedKeyRef[]): (ref: FeedKeyRef) => FeedKey | undefined {
    if (refs.length === 1) {
      const only = this.keys.get(refs[0]!.id) ?? undefined;
      return () => only;
    }
    const held = new Map<string, FeedKey | undefined>();
    for (const ref of refs) held.set(ref.id, this.keys.get(ref.id) ?? undefined);
    return (ref) => held.get(ref.id);
  }

  /** Whether every key a record's boxes name is held: a batch of several feeds' activities loses those of an erased feed. */
  private holdsEveryKey(record: RecordedEvent, refs: readonly FeedKeyRef[]): boolean {
    if (record.type !== 'ActivitiesAdded') return true; // one box: a destroyed key already made it a tombstone
    return refs.every((ref) => this.keys.get(ref.id));
  }

  /** Destroys an erasure's keys (again, harmlessly, when a read meets one already done) and tells the listeners. */
  private async erased(data: FeedErasedData, position: number): Promise<void> {
    const refs: FeedKeyRef[] = (data.keys ?? []).map((id) => ({ feed: data.feed, id }));
    this.stopSealingWith(refs);
    const standing = refs.filter((ref) => this.keys.get(ref.id) !== null);
    if (standing.length > 0) {
      const exist = await this.keyStore.find(standing);
      if (exist.size > 0) await this.keyStore.destroy([...exist.values()]);
    }
    for (const ref of refs) {
      if (this.keys.get(ref.id) !== null) this.destroyedKeys++;
      this.keys.set(ref.id, null);
    }
    // Again: a post of the feed called meanwhile asked the store for a key before the destroy
    // began, and may have learnt one of these. From here on `learn` refuses them, so no current
    // key is ever a destroyed one, and appends need not check theirs.
    this.stopSealingWith(refs);
    for (const listener of this.listeners) listener({ feed: data.feed, position });
  }

  /** Seals no new content with the keys of `refs`: their feeds get new keys at their next append. */
  private stopSealingWith(refs: readonly FeedKeyRef[]): void {
    for (const ref of refs) if (this.current.get(ref.feed)?.id === ref.id) this.current.delete(ref.feed);
  }

  /**
   * The records with their boxes opened: every key the batch needs is looked up at once
   * (one round trip to the key store at most), then each record is opened without waiting.
   * Erasures in the batch destroy their keys after the batch is opened.
   */
  private async opened(records: readonly RecordedEvent[]): Promise<RecordedEvent[]> {
    let unknown: Map<string, FeedKeyRef> | undefined;
    let erasures: RecordedEvent[] | undefined;
    // Until a key is destroyed here, what this process sealed or opened whole reads as it was,
    // with no key to look at: every post, in a standalone, for each of its four readers.
    const known = new Array<unknown>(records.length);
    const noneDestroyed = this.destroyedKeys === 0;
    // The keys each record's boxes name, read once per record.
    const refsOf = new Array<FeedKeyRef[]>(records.length);
    for (let index = 0; index < records.length; index++) {
      const record = records[index]!;
      if (record.type === 'FeedErased') (erasures ??= []).push(record);
      if (!SEALED_EVENT_TYPES.has(record.type)) continue;
      if (noneDestroyed && (known[index] = this.plainOf.get(record.data as object)) !== undefined) continue;
      const refs = (refsOf[index] = sealedKeyRefs(record.type, record.data));
      for (const ref of refs) if (!this.keys.has(ref.id)) (unknown ??= new Map()).set(ref.id, ref);
    }
    if (unknown) {
      const found = await this.keyStore.find([...unknown.values()]);
      // A miss reads as a tombstone this time but is not cached: only an erasure naming the
      // key says it is destroyed for good, and a store may miss a key it holds (a replica
      // behind its leader), which a later read must ask for again. A key an erasure destroyed
      // while it was looked up stays destroyed: cached, its content would read whole here again.
      for (const [id, key] of found) if (this.keys.get(id) !== null) this.keys.set(id, key);
    }
    const out = new Array<RecordedEvent>(records.length);
    const keyOf = (ref: FeedKeyRef) => this.keys.get(ref.id) ?? undefined;
    for (let index = 0; index < records.length; index++) {
      const record = records[index]!;
      if (!SEALED_EVENT_TYPES.has(record.type)) {
        out[index] = record;
        continue;
      }
      // Known plain data stands as long as no key was destroyed meanwhile (the key lookup above may have let an erasure through).
      if (known[index] !== undefined && this.destroyedKeys === 0) {
        out[index] = { ...record, data: known[index] };
        continue;
      }
      refsOf[index] ??= sealedKeyRefs(record.type, record.data);
      // Otherwise a destroyed key is looked for first, whatever this process knows of the plain data.
      const refs = refsOf[index]!;
      const tombstone = tombstoneOf(record.type, record.data, keyOf, refs);
      if (tombstone) out[index] = { ...record, type: tombstone.type, data: tombstone.data, metadata: { v: 1 } };
      else {
        // Opened whole (every key held), it is what any reader opening it now would get.
        const whole = this.holdsEveryKey(record, refs);
        const plain = whole ? this.plainOf.get(record.data as object) : undefined;
        out[index] = plain !== undefined ? { ...record, data: plain } : new RecordOpenedOnRead(record, this.keysHeldNow(refs), whole ? this.plainOf : undefined);
      }
    }
    if (erasures) for (const record of erasures) await this.erased(record.data as FeedErasedData, record.position);
    return out;
  }
}

/** Whether the append holds an import (`ActivitiesAdded`, in a stream of its own). */
function isImport(events: readonly NewEvent[]): boolean {
  return events.some((event) => event.type === 'ActivitiesAdded');
}

/**
 * A record whose boxes are opened when its `data` is first read, not before: most readers
 * of the log skip most events by their type (graph skips every post), and a box costs a
 * cipher to open. Its keys were looked up with its batch, so opening is synchronous. With
 * `plainOf` (the record opens whole), what another reader of the record opened is taken
 * from there, and what this one opens is left there for the others.
 *
 * A replay makes one per sealed record, so it is kept small: `data` is an own enumerable
 * accessor (a copy with spread, `Object.keys` and JSON see it as a plain record's) that all
 * of them share, and what it needs is in private fields; a getter of its own per record made
 * each one a dictionary, which took a third of a replay's time in the garbage collector.
 */
class RecordOpenedOnRead implements RecordedEvent {
  static readonly #data: PropertyDescriptor = {
    enumerable: true,
    configurable: true,
    get(this: RecordOpenedOnRead) {
      return this.#opened();
    },
  };

  readonly stream: string;
  readonly revision: number;
  readonly position: number;
  readonly type: string;
  readonly metadata: Record<string, unknown>;
  readonly recordedAt: string;
  declare readonly data: unknown;
  declare readonly trusted?: boolean;
  #sealed: unknown;
  #plain: unknown;
  /** Undefined once opened. */
  #keyOf: ((ref: FeedKeyRef) => FeedKey | undefined) | undefined;
  #plainOf: WeakMap<object, unknown> | undefined;

  constructor(record: RecordedEvent, keyOf: (ref: FeedKeyRef) => FeedKey | undefined, plainOf: WeakMap<object, unknown> | undefined) {
    this.stream = record.stream;
    this.revision = record.revision;
    this.position = record.position;
    this.type = record.type;
    this.metadata = record.metadata;
    this.recordedAt = record.recordedAt;
    if (record.trusted !== undefined) (this as { trusted?: boolean }).trusted = record.trusted;
    this.#sealed = record.data;
    this.#keyOf = keyOf;
    this.#plainOf = plainOf;
    Object.defineProperty(this, 'data', RecordOpenedOnRead.#data);
  }

  #opened(): unknown {
    const keyOf = this.#keyOf;
    if (keyOf) {
      const sealed = this.#sealed as object;
      let plain = this.#plainOf?.get(sealed);
      if (plain === undefined) {
        const result = openEventData(this.type, sealed, keyOf);
        plain = result.data;
        if (result.whole) this.#plainOf?.set(sealed, plain);
      }
      this.#plain = plain;
      this.#keyOf = undefined;
      this.#plainOf = undefined;
      this.#sealed = undefined;
    }
    return this.#plain;
  }
}
