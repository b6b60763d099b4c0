import { open, readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import type { FeedId } from '@feedmill/contracts';
import type { FeedKeyStore } from './feed-keys.port.js';
import { syncDirectory } from '../file/sync-directory.js';
import { newFeedKey, type FeedKey, type FeedKeyRef } from './sealed-content.js';

/** The key file's name in the data directory. */
export const FEED_KEYS_FILE = 'feed-keys.jsonl';

interface KeyLine {
  id: string;
  feed: FeedId;
  secret: string;
}

/**
 * The key file has a line that is not a key before its last: it was changed by hand or
 * damaged. Skipping it would lose a key for good (its content unreadable, and never
 * destroyed on an erasure), so the store refuses to open.
 */
export class UnreadableKeyFileError extends Error {
  readonly code = 'UNREADABLE_KEY_FILE';
  override readonly name = 'UnreadableKeyFileError';

  constructor(
    readonly file: string,
    readonly line: number,
    cause?: unknown,
  ) {
    super(`${file} line ${line} is not a feed key ({"id","feed","secret"} as JSON): repair or restore the file before starting`, { cause });
  }
}

function parseKeyLine(line: string, file: string, number: number): KeyLine {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch (error) {
    throw new UnreadableKeyFileError(file, number, error);
  }
  const { id, feed, secret } = (parsed ?? {}) as Partial<Record<keyof KeyLine, unknown>>;
  if (typeof id !== 'string' || typeof feed !== 'string' || typeof secret !== 'string' || id === '' || secret === '') throw new UnreadableKeyFileError(file, number);
  return { id, feed: feed as FeedId, secret };
}

/**
 * Feeds' keys in one file of JSON lines beside the file log (`feed-keys.jsonl`): a new key
 * is appended and fsynced before it is used; destroying keys rewrites the file without them
 * (temp file, fsync, rename, fsync of the directory), so that their bytes leave the file;
 * a key is forgotten in memory only once that rewrite is durable. A line that is not a key
 * before the last (a torn last line is cut off) refuses the open: {@link UnreadableKeyFileError}.
 * One process owns the directory (the file log's lock): everything is held in memory too.
 */
export class FileFeedKeyStore implements FeedKeyStore {
  private readonly byId = new Map<string, FeedKey>();
  /**
   * Marks of keys an erasure is about to destroy, by id. In memory only: one process owns the
   * directory, so no other process's import can race its erasures, and a crash that forgets a
   * mark forgets the erasure that made it too.
   */
  private readonly marks = new Map<string, number>();
  private readonly current = new Map<FeedId, FeedKey>();
  /** Whether the key file exists on disk (its directory entry durable). */
  private created = false;
  /** Writes one after another: a rewrite must not lose a key appended meanwhile. */
  private writing: Promise<unknown> = Promise.resolve();

  private constructor(private readonly dir: string) {}

  static async open(dir: string): Promise<FileFeedKeyStore> {
    const store = new FileFeedKeyStore(dir);
    const text = await readFile(store.path, 'utf8').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined;
      throw error;
    });
    store.created = text !== undefined;
    if (text === undefined) return store;
    const whole = text.lastIndexOf('\n') + 1;
    if (whole < Buffer.byteLength(text)) {
      // A torn last line was never acknowledged to anyone (no event uses its key): it is cut
      // off, so that the next key is not appended to it and lost with it.
      const file = await open(store.path, 'r+');
      try {
        await file.truncate(Buffer.byteLength(text.slice(0, whole)));
        await file.sync();
      } finally {
        await file.close();
      }
    }
    for (const [index, line] of text.slice(0, whole).split('\n').entries()) {
      if (line.trim() === '') continue;
      const parsed = parseKeyLine(line, store.path, index + 1);
      store.remember({ id: parsed.id, feed: parsed.feed, secret: Buffer.from(parsed.secret, 'base64') });
    }
    return store;
  }

  private get path(): string {
    return join(this.dir, FEED_KEYS_FILE);
  }

  private remember(key: FeedKey): void {
    this.byId.set(key.id, key);
    this.current.set(key.feed, key);
  }

  async currentKeys(feeds: readonly FeedId[]): Promise<Map<FeedId, FeedKey>> {
    const made: FeedKey[] = [];
    for (const feed of feeds) if (!this.current.has(feed) && !made.some((one) => one.feed === feed)) made.push(newFeedKey(feed));
    if (made.length === 0) return new Map(feeds.map((feed) => [feed, this.current.get(feed)!]));
    await this.serially(() => this.appended(made));
    for (const key of made) {
      this.byId.set(key.id, key);
      // Another call may have made a key for the same feed meanwhile: both are kept (both
      // are durable, and an erasure destroys every key of the feed), the first stays current.
      if (!this.current.has(key.feed)) this.current.set(key.feed, key);
    }
    // A destroy while the write was under way may have taken the current key of a feed that
    // had one: asked again, such a feed gets a new key, so that every feed asked for gets one.
    return this.currentKeys(feeds);
  }

  /**
   * Appends `keys` to the file, durably. A failed append is cut back off, so that the next one
   * does not start on the fragment a short write left (a full disk), which would make the file
   * unreadable at the next open and lose the key appended after it.
   */
  private async appended(keys: readonly FeedKey[]): Promise<void> {
    const file = await open(this.path, 'a');
    try {
      const { size } = await file.stat();
      try {
        await file.appendFile(keys.map((key) => lineOf(key)).join(''));
        await file.sync();
      } catch (error) {
        await file.truncate(size);
        await file.sync();
        throw error;
      }
    } finally {
      await file.close();
    }
    // The file's first write created it: its name must be durable too.
    if (!this.created) await syncDirectory(this.dir);
    this.created = true;
  }

  async keysOf(feed: FeedId): Promise<FeedKey[]> {
    return [...this.byId.values()].filter((key) => key.feed === feed);
  }

  async find(refs: readonly FeedKeyRef[]): Promise<Map<string, FeedKey>> {
    const found = new Map<string, FeedKey>();
    for (const { id } of refs) {
      const key = this.byId.get(id);
      if (key) found.set(id, key);
    }
    return found;
  }

  async markDestroying(refs: readonly FeedKeyRef[]): Promise<void> {
    const now = Date.now();
    for (const { id } of refs) if (this.byId.has(id)) this.marks.set(id, now);
  }

  async marked(refs: readonly FeedKeyRef[]): Promise<Map<string, number>> {
    const marked = new Map<string, number>();
    for (const { id } of refs) {
      const at = this.marks.get(id);
      if (at !== undefined) marked.set(id, at);
    }
    return marked;
  }

  async destroy(refs: readonly FeedKeyRef[]): Promise<void> {
    const gone = new Set(refs.filter(({ id }) => this.byId.has(id)).map(({ id }) => id));
    if (gone.size === 0) return;
    // No new content is sealed with a key being destroyed, whether or not the rewrite succeeds.
    for (const { id, feed } of refs) if (this.current.get(feed)?.id === id) this.current.delete(feed);
    await this.serially(async () => {
      // Keys appended while this waited its turn are in the map, and stay in the file.
      const kept = [...this.byId.values()].filter((key) => !gone.has(key.id));
      const temp = `${this.path}.tmp`;
      const file = await open(temp, 'w');
      try {
        await file.writeFile(kept.map((key) => lineOf(key)).join(''));
        await file.sync();
      } finally {
        await file.close();
      }
      await rename(temp, this.path);
      await syncDirectory(this.dir);
    });
    // Forgotten only now that the file without them is durable: had the rewrite failed, a
    // retried erasure would find them (keysOf) and destroy them, instead of finding none.
    for (const id of gone) {
      this.byId.delete(id);
      this.marks.delete(id);
    }
  }

  async close(): Promise<void> {
    await this.writing;
  }

  private serially<T>(write: () => Promise<T>): Promise<T> {
    const next = this.writing.then(write, write);
    this.writing = next.catch(() => undefined);
    return next;
  }
}

function lineOf(key: FeedKey): string {
  return `${JSON.stringify({ id: key.id, feed: key.feed, secret: key.secret.toString('base64') })}\n`;
}
