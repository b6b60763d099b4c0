import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { startNatsServer, type NatsServerHandle } from '@feedmill/harness';
import { withTimeout } from '../with-timeout.js';
import { JetStreamFeedKeyStore } from './jetstream-feed-keys.js';

async function storeHolds(dir: string, bytes: Buffer): Promise<boolean> {
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && (await readFile(join(entry.parentPath, entry.name))).includes(bytes)) return true;
  }
  return false;
}

describe('JetStream feed key store', () => {
  let nats: NatsServerHandle;
  beforeAll(async () => (nats = await startNatsServer()));
  afterAll(() => nats?.stop());

  it('keeps one key per feed for every process, and destroys it so that its bytes leave the JetStream store', async () => {
    const one = await JetStreamFeedKeyStore.connect({ servers: nats.url, bucket: 'KEYS_feed_keys' });
    const two = await JetStreamFeedKeyStore.connect({ servers: nats.url, bucket: 'KEYS_feed_keys' });
    try {
      const bob = (await one.currentKeys(['user:bob'])).get('user:bob')!;
      expect((await two.currentKeys(['user:bob'])).get('user:bob')?.id).toBe(bob.id);
      expect((await two.find([{ feed: 'user:bob', id: bob.id }])).get(bob.id)?.secret.equals(bob.secret)).toBe(true);
      const ann = (await one.currentKeys(['user:ann'])).get('user:ann')!;
      const secret = Buffer.from(bob.secret.toString('base64'));
      expect(await storeHolds(nats.storeDir, secret)).toBe(true);

      // Every process that reads the erasure destroys the key, at the same moment too.
      await Promise.all([one, two, one].map((store) => store.destroy([{ feed: 'user:bob', id: bob.id }])));
      await one.destroy([{ feed: 'user:bob', id: bob.id }]); // again: nothing to do
      expect((await one.find([{ feed: 'user:bob', id: bob.id }])).size).toBe(0);
      expect(await one.keysOf('user:bob')).toEqual([]);
      expect(await storeHolds(nats.storeDir, secret)).toBe(false);
      expect((await one.keysOf('user:ann')).map((key) => key.id)).toEqual([ann.id]);
      expect((await one.currentKeys(['user:bob'])).get('user:bob')!.id).not.toBe(bob.id);
    } finally {
      await one.close();
      await two.close();
    }
  });

  it("marks keys an erasure is about to destroy for every process, keeps them readable and listed as the feed's keys, and drops the marks with the keys", async () => {
    const one = await JetStreamFeedKeyStore.connect({ servers: nats.url, bucket: 'MARKS_feed_keys' });
    const two = await JetStreamFeedKeyStore.connect({ servers: nats.url, bucket: 'MARKS_feed_keys' });
    try {
      const bob = (await one.currentKeys(['user:bob'])).get('user:bob')!;
      const ann = (await one.currentKeys(['user:ann'])).get('user:ann')!;
      const refs = [
        { feed: 'user:bob' as const, id: bob.id },
        { feed: 'user:ann' as const, id: ann.id },
      ];
      expect((await two.marked(refs)).size).toBe(0);
      const before = Date.now();
      await one.markDestroying([refs[0]!]);
      const marked = await two.marked(refs);
      expect([...marked.keys()]).toEqual([bob.id]);
      expect(marked.get(bob.id)!).toBeGreaterThanOrEqual(before - 1000);
      // Marked, it is still found, still the feed's key, and still the only one listed.
      expect((await two.find(refs)).size).toBe(2);
      expect((await two.keysOf('user:bob')).map((key) => key.id)).toEqual([bob.id]);
      expect((await two.currentKeys(['user:bob'])).get('user:bob')!.id).toBe(bob.id);
      await two.destroy([refs[0]!]);
      expect((await one.marked(refs)).size).toBe(0);
      expect((await one.find(refs)).size).toBe(1);
      // Every process that reads an erasure destroys its keys and marks, at the same moment too:
      // one that finds a message another deleted meanwhile takes it as gone.
      for (let round = 0; round < 20; round++) {
        const feed = `user:r${round}` as const;
        const ref = { feed, id: (await one.currentKeys([feed])).get(feed)!.id };
        await one.markDestroying([ref]);
        await Promise.all([one.destroy([ref]), two.destroy([ref]), one.destroy([ref]), two.destroy([ref])]);
        expect([(await one.find([ref])).size, (await two.marked([ref])).size]).toEqual([0, 0]);
      }
    } finally {
      await one.close();
      await two.close();
    }
  });

  it('reads keys from the stream leader, never by direct get (which any replica answers, maybe before it has the key)', async () => {
    const watcher = await connect({ servers: nats.url });
    const direct: string[] = [];
    const leader: string[] = [];
    const watch = (subject: string, into: string[]) => {
      const subscription = watcher.subscribe(subject);
      void (async () => {
        for await (const message of subscription) into.push(message.subject);
      })();
    };
    watch('$JS.API.DIRECT.GET.>', direct);
    watch('$JS.API.STREAM.MSG.GET.>', leader);
    await watcher.flush();
    const store = await JetStreamFeedKeyStore.connect({ servers: nats.url, bucket: 'LEADER_feed_keys' });
    try {
      const bob = (await store.currentKeys(['user:bob'])).get('user:bob')!;
      expect((await store.find([bob])).get(bob.id)?.secret.equals(bob.secret)).toBe(true);
      expect((await store.keysOf('user:bob')).map((key) => key.id)).toEqual([bob.id]);
      await watcher.flush();
      expect(direct).toEqual([]);
      expect(leader.length).toBeGreaterThan(0);
    } finally {
      await store.close();
      await watcher.close();
    }
  });

  it("lists a feed's keys at once while its keys are made and destroyed around it", async () => {
    const store = await JetStreamFeedKeyStore.connect({ servers: nats.url, bucket: 'CHURN_feed_keys' });
    const other = await JetStreamFeedKeyStore.connect({ servers: nats.url, bucket: 'CHURN_feed_keys' });
    let stop = false;
    // Another process: bob's key is made and destroyed again and again, as erasures and posts to bob meet.
    const churn = (async () => {
      while (!stop) {
        const key = (await other.currentKeys(['user:bob'])).get('user:bob')!;
        await other.destroy([{ feed: 'user:bob', id: key.id }]);
      }
    })();
    try {
      // The KV's own key listing waited for a consumer heartbeat (5 s and more) when a key it counted went first.
      for (let call = 0; call < 200; call++) {
        const keys = await withTimeout(store.keysOf('user:bob'), 3_000, `listing ${call} took over 3 s`);
        expect(keys.length).toBeLessThanOrEqual(1);
        expect(keys.every((key) => key.feed === 'user:bob')).toBe(true);
      }
    } finally {
      stop = true;
      await churn;
      await store.close();
      await other.close();
    }
  });

  it('fails a destroy it cannot do, instead of taking every JetStream error for "already gone"', async () => {
    const store = await JetStreamFeedKeyStore.connect({ servers: nats.url, bucket: 'GONE_feed_keys' });
    const admin = await connect({ servers: nats.url });
    try {
      const bob = (await store.currentKeys(['user:bob'])).get('user:bob')!;
      await (await jetstreamManager(admin)).streams.delete('KV_GONE_feed_keys');
      await expect(store.destroy([bob])).rejects.toThrow(/stream not found/);
    } finally {
      await store.close();
      await admin.close();
    }
  });
});
