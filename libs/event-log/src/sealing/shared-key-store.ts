import type { FeedKeyStore } from './feed-keys.port.js';

/** A key store as several logs in one test share it: closing one of them leaves it open (the test closes it). */
export function sharedKeyStore(store: FeedKeyStore): FeedKeyStore {
  return {
    currentKeys: (feeds) => store.currentKeys(feeds),
    keysOf: (feed) => store.keysOf(feed),
    find: (refs) => store.find(refs),
    markDestroying: (refs) => store.markDestroying(refs),
    marked: (refs) => store.marked(refs),
    destroy: (refs) => store.destroy(refs),
    close: async () => undefined,
  };
}
