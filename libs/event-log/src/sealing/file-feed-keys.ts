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
 * The key file has a line that is not a key, and that no crash explains ({@link readKeyFile}):
 * it was changed by hand or damaged. Skipping it would lose a key for good (its content
 * unreadable, and never destroyed on an erasure), so the store refuses to open.
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

/** A key line, a frame line, or undefined for bytes that are neither. */
function parseLine(line: string): { key: KeyLine } | { frame: number } | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    return undefined;
  }
  const { id, feed, secret, keys } = (parsed ?? {}) as Partial<Record<keyof KeyLine | 'keys', unknown>>;
  if (typeof keys === 'number' && Number.isInteger(keys) && keys > 0 && id === undefined) return { frame: keys };
  if (typeof id !== 'string' || typeof feed !== 'string' || typeof secret !== 'string' || id === '' || secret === '') return undefined;
  return { key: { id, feed: feed as FeedId, secret } };
}

/** More zeros in a row than a key line ever holds: bytes the file system never wrote. */
const UNWRITTEN = Buffer.alloc(8);
const NEWLINE = 0x0a;

/**
 * The keys of a key file, and where its whole appends end (`end`, its length when nothing
 * is cut). Each append begins with a frame line, `{"keys":N}`, and its N key lines follow;
 * lines before the first frame are keys written before frames, one append each.
 *
 * What a crash leaves of the last append, which was never acknowledged (its fsync never
 * returned, so no event was sealed with its keys), is cut from where the append began: a line
 * cut short at the end of the file, fewer lines than its frame announced, or, as a power loss
 * may keep a write's later pages and not an earlier one, lines holding unwritten zeros, whole
 * key lines after them included. Damage a crash cannot explain refuses the file: a frame
 * after the bad line (a later append was acknowledged, so this one was too), or a bad line
 * without zeros in it.
 */
export function readKeyFile(bytes: Buffer, file: string): { keys: KeyLine[]; end: number } {
  const keys: KeyLine[] = [];
  let offset = 0;
  let number = 0;
  /** The open append: where it began, the keys read before it, and the lines its frame still announces. */
  let appendStart = 0;
  let keysBefore = 0;
  let linesLeft = 0;
  while (offset < bytes.length) {
    const newline = bytes.indexOf(NEWLINE, offset);
    const lineEnd = newline === -1 ? bytes.length : newline + 1;
    number++;
    const text = bytes.toString('utf8', offset, lineEnd).trim();
    if (newline !== -1 && text === '') {
      offset = lineEnd;
      continue;
    }
    const line = newline === -1 ? undefined : parseLine(text);
    // A frame inside an append: the append lost lines after it was acknowledged.
    if (line !== undefined && 'frame' in line && linesLeft > 0) throw new UnreadableKeyFileError(file, number);
    if (line === undefined) {
      if (!tornAppendAt(bytes, offset, newline === -1)) throw new UnreadableKeyFileError(file, number);
      const cut = linesLeft > 0 ? appendStart : offset;
      return { keys: keys.slice(0, linesLeft > 0 ? keysBefore : keys.length), end: cut };
    }
    if ('frame' in line) {
      appendStart = offset;
      keysBefore = keys.length;
      linesLeft = line.frame;
    } else {
      keys.push(line.key);
      if (linesLeft > 0) linesLeft--;
    }
    offset = lineEnd;
  }
  // The last append ended at a line's end, short of what its frame announced.
  if (linesLeft > 0) return { keys: keys.slice(0, keysBefore), end: appendStart };
  return { keys, end: bytes.length };
}

/**
 * Whether the bad line at `from` is what a crash leaves of the file's last append: cut short
 * at the end of the file, or holding unwritten zeros, and with no append's frame after it.
 */
function tornAppendAt(bytes: Buffer, from: number, cutShort: boolean): boolean {
  for (let offset = bytes.indexOf(NEWLINE, from) + 1; offset > 0 && offset < bytes.length; ) {
    const newline = bytes.indexOf(NEWLINE, offset);
    if (newline === -1) break;
    const line = parseLine(bytes.toString('utf8', offset, newline).trim());
    if (line && 'frame' in line) return false;
    offset = newline + 1;
  }
  return cutShort || bytes.indexOf(UNWRITTEN, from) !== -1;
}

/**
 * Feeds' keys in one file of JSON lines beside the file log (`feed-keys.jsonl`): a new key
 * is appended and fsynced before it is used; destroying keys rewrites the file without them
 * (temp file, fsync, rename, fsync of the directory), so that their bytes leave the file;
 * a key is forgotten in memory only once that rewrite is durable. A torn last append is cut
 * at open; other damage refuses it ({@link readKeyFile}, {@link UnreadableKeyFileError}).
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
    const bytes = await readFile(store.path).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined;
      throw error;
    });
    store.created = bytes !== undefined;
    if (bytes === undefined) return store;
    const { keys, end } = readKeyFile(bytes, store.path);
    if (end < bytes.length) {
      // A torn last append: cut, so that the next append does not follow its damage.
      const file = await open(store.path, 'r+');
      try {
        await file.truncate(end);
        await file.sync();
      } finally {
        await file.close();
      }
    }
    for (const key of keys) store.remember({ id: key.id, feed: key.feed, secret: Buffer.from(key.secret, 'base64') });
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
    // By feed: the sealed log asks for every new feed of a batch of appends at once, and an import names up to thousands.
    const made = new Map<FeedId, FeedKey>();
    for (const feed of feeds) if (!this.current.has(feed) && !made.has(feed)) made.set(feed, newFeedKey(feed));
    if (made.size === 0) return new Map(feeds.map((feed) => [feed, this.current.get(feed)!]));
    const keys = [...made.values()];
    await this.serially(async () => {
      await this.appended(keys);
      // Kept in memory as part of the write, so that a rewrite queued behind it (a destroy) keeps them in the file.
      for (const key of keys) {
        this.byId.set(key.id, key);
        // Another call may have made a key for the same feed meanwhile: both are kept (both
        // are durable, and an erasure destroys every key of the feed), the first stays current.
        if (!this.current.has(key.feed)) this.current.set(key.feed, key);
      }
    });
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
        await file.appendFile(framed(keys));
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
        await file.writeFile(framed(kept));
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

/** One write of keys as the file holds it: its frame, then a line per key (nothing for none). */
function framed(keys: readonly FeedKey[]): string {
  if (keys.length === 0) return '';
  return `{"keys":${keys.length}}\n${keys.map((key) => `${JSON.stringify({ id: key.id, feed: key.feed, secret: key.secret.toString('base64') })}\n`).join('')}`;
}
