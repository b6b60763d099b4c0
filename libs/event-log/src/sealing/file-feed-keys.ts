import { open, readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import type { FeedId } from '@feedmill/contracts';
import type { FeedKeyStore } from './feed-keys.port.js';
import { newFeedKey, type FeedKey, type FeedKeyRef } from './sealed-content.js';

/** The key file's name in the data directory. */
export const FEED_KEYS_FILE = 'feed-keys.jsonl';

interface KeyLine {
  id: string;
  feed: FeedId;
  secret: string;
}

/**
 * Feeds' keys in one file of JSON lines beside the file log (`feed-keys.jsonl`): a new key
 * is appended and fsynced before it is used; destroying keys rewrites the file without them
 * (temp file, fsync, rename, fsync of the directory), so that their bytes leave the file.
 * One process owns the directory (the file log's lock): everything is held in memory too.
 */
export class FileFeedKeyStore implements FeedKeyStore {
  private readonly byId = new Map<string, FeedKey>();
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
    for (const line of text.slice(0, whole).split('\n')) {
      if (line.trim() === '') continue;
      let parsed: KeyLine;
      try {
        parsed = JSON.parse(line) as KeyLine;
      } catch {
        continue;
      }
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
    const keys = new Map<FeedId, FeedKey>();
    const made: FeedKey[] = [];
    for (const feed of feeds) {
      let key = this.current.get(feed) ?? made.find((one) => one.feed === feed);
      if (!key) made.push((key = newFeedKey(feed)));
      keys.set(feed, key);
    }
    if (made.length > 0) {
      await this.serially(async () => {
        const file = await open(this.path, 'a');
        try {
          await file.appendFile(made.map((key) => lineOf(key)).join(''));
          await file.sync();
        } finally {
          await file.close();
        }
        // The file's first write created it: its name must be durable too.
        if (!this.created) await this.syncDirectory();
        this.created = true;
      });
      for (const key of made) {
        this.byId.set(key.id, key);
        if (!this.current.has(key.feed)) this.current.set(key.feed, key);
      }
      // Another call may have made a key for the same feed meanwhile: both are kept (both
      // are durable, and an erasure destroys every key of the feed), the first stays current.
      for (const feed of feeds) keys.set(feed, this.current.get(feed)!);
    }
    return keys;
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

  async destroy(refs: readonly FeedKeyRef[]): Promise<void> {
    const gone = refs.filter(({ id }) => this.byId.has(id));
    if (gone.length === 0) return;
    for (const { id, feed } of gone) {
      this.byId.delete(id);
      if (this.current.get(feed)?.id === id) this.current.delete(feed);
    }
    await this.serially(async () => {
      const temp = `${this.path}.tmp`;
      const file = await open(temp, 'w');
      try {
        await file.writeFile([...this.byId.values()].map((key) => lineOf(key)).join(''));
        await file.sync();
      } finally {
        await file.close();
      }
      await rename(temp, this.path);
      await this.syncDirectory();
    });
  }

  async close(): Promise<void> {
    await this.writing;
  }

  private async syncDirectory(): Promise<void> {
    const dir = await open(this.dir, 'r');
    try {
      await dir.sync();
    } finally {
      await dir.close();
    }
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
