import { appendFile, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileFeedKeyStore, FEED_KEYS_FILE } from './file-feed-keys.js';

let dir: string;
beforeEach(async () => (dir = await mkdtemp(join(tmpdir(), 'feedmill-keys-'))));
afterEach(() => rm(dir, { recursive: true, force: true }));

describe('file feed key store', () => {
  it('makes a key durable before returning it, keeps one per feed across a reopen, and destroys it so that its bytes leave the file', async () => {
    const store = await FileFeedKeyStore.open(dir);
    const keys = await store.currentKeys(['user:bob', 'user:ann', 'user:bob']);
    const bob = keys.get('user:bob')!;
    expect(keys.size).toBe(2);
    expect((await store.currentKeys(['user:bob'])).get('user:bob')).toBe(bob);
    const secret = bob.secret.toString('base64');
    expect(await readFile(join(dir, FEED_KEYS_FILE), 'utf8')).toContain(secret);
    await store.close();

    const reopened = await FileFeedKeyStore.open(dir);
    expect((await reopened.find([{ feed: 'user:bob', id: bob.id }])).get(bob.id)?.secret.equals(bob.secret)).toBe(true);
    await reopened.destroy([{ feed: 'user:bob', id: bob.id }]);
    await reopened.destroy([{ feed: 'user:bob', id: bob.id }]); // again: nothing to do
    expect((await reopened.find([{ feed: 'user:bob', id: bob.id }])).size).toBe(0);
    const file = await readFile(join(dir, FEED_KEYS_FILE), 'utf8');
    expect(file).not.toContain(secret);
    expect(file).toContain(keys.get('user:ann')!.secret.toString('base64'));
    const fresh = (await reopened.currentKeys(['user:bob'])).get('user:bob')!;
    expect(fresh.id).not.toBe(bob.id);
    await reopened.close();
  });

  it('cuts a torn last line at open, so that the next key is not appended to it and lost', async () => {
    const store = await FileFeedKeyStore.open(dir);
    const bob = (await store.currentKeys(['user:bob'])).get('user:bob')!;
    await store.close();
    await appendFile(join(dir, FEED_KEYS_FILE), '{"id":"torn","feed":"user:x","sec');
    const reopened = await FileFeedKeyStore.open(dir);
    const ann = (await reopened.currentKeys(['user:ann'])).get('user:ann')!;
    await reopened.close();
    const again = await FileFeedKeyStore.open(dir);
    const found = await again.find([{ feed: 'user:bob', id: bob.id }, { feed: 'user:ann', id: ann.id }, { feed: 'user:x', id: 'torn' }]);
    expect([...found.keys()].sort()).toEqual([ann.id, bob.id].sort());
    await again.close();
  });
});
