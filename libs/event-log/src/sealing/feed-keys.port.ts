import type { FeedId } from '@feedmill/contracts';
import type { FeedKey, FeedKeyRef } from './sealed-content.js';

/**
 * Where feeds' data keys live, outside the log: a key file beside the file log, or a
 * JetStream KV bucket beside the JetStream log. A key is durable before it is returned, so
 * that no acknowledged event is sealed with a key a crash could lose; a destroyed key's
 * bytes leave the storage.
 */
export interface FeedKeyStore {
  /** A key for each feed (the one it has, or a new one made durable first), in one write for all new ones. */
  currentKeys(feeds: readonly FeedId[]): Promise<Map<FeedId, FeedKey>>;
  /** Every key `feed` has now. */
  keysOf(feed: FeedId): Promise<FeedKey[]>;
  /** The keys that exist of those asked for, by id: a key not found was destroyed. */
  find(refs: readonly FeedKeyRef[]): Promise<Map<string, FeedKey>>;
  /**
   * Marks keys an erasure is about to destroy, before its `FeedErased` is appended: an import
   * sealed with one of them, which its own stream does not order against the erasure, waits
   * to learn whether the erasure destroys it (see `SealedEventLog`). A marked key is still
   * found and still seals: a crash before the erasure is appended leaves it as it was.
   */
  markDestroying(refs: readonly FeedKeyRef[]): Promise<void>;
  /** Of the keys asked for, those marked and not yet destroyed, with when each was marked (ms since the epoch). */
  marked(refs: readonly FeedKeyRef[]): Promise<Map<string, number>>;
  /** Destroys keys, removing their bytes from storage (and their marks); a key already gone is passed over. */
  destroy(refs: readonly FeedKeyRef[]): Promise<void>;
  close(): Promise<void>;
}
