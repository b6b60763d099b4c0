import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startNatsServer, type NatsServerHandle } from '@feedmill/harness';
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
});
