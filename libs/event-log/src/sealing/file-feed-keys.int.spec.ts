import { appendFile, mkdir, mkdtemp, open, readFile, rm, rmdir, writeFile, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileFeedKeyStore, FEED_KEYS_FILE, UnreadableKeyFileError } from './file-feed-keys.js';

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

  it("hands a feed whose key is destroyed while another feed's new key is written a new key, made durable", async () => {
    const store = await FileFeedKeyStore.open(dir);
    const ann = (await store.currentKeys(['user:ann'])).get('user:ann')!;
    // Called in one tick: the destroy takes ann's key while the write of bob's is under way.
    const [keys] = await Promise.all([store.currentKeys(['user:ann', 'user:bob']), store.destroy([ann])]);
    const fresh = keys.get('user:ann');
    expect(fresh?.id).toEqual(expect.any(String));
    expect(fresh!.id).not.toBe(ann.id);
    expect((await store.currentKeys(['user:ann'])).get('user:ann')).toBe(fresh);
    await store.close();
    const reopened = await FileFeedKeyStore.open(dir);
    const bob = keys.get('user:bob')!;
    const found = await reopened.find([ann, fresh!, bob]);
    expect([...found.keys()].sort()).toEqual([fresh!.id, bob.id].sort());
    expect(found.get(fresh!.id)!.secret.equals(fresh!.secret)).toBe(true);
    await reopened.close();
  });

  it('leaves nothing of a key append that failed partway, so that the next key is not appended to the fragment and lost with it', async () => {
    const store = await FileFeedKeyStore.open(dir);
    const bob = (await store.currentKeys(['user:bob'])).get('user:bob')!;
    const before = await readFile(join(dir, FEED_KEYS_FILE), 'utf8');
    // The next append writes part of its line and fails, as when the disk fills up meanwhile.
    const probe = await open(join(dir, 'probe'), 'w');
    const handles = Object.getPrototypeOf(probe) as FileHandle;
    await probe.close();
    const appendFile = handles.appendFile;
    handles.appendFile = async function (this: FileHandle, data: string | Uint8Array) {
      handles.appendFile = appendFile;
      await appendFile.call(this, data.slice(0, 20));
      throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    };
    try {
      await expect(store.currentKeys(['user:ann'])).rejects.toMatchObject({ code: 'ENOSPC' });
    } finally {
      handles.appendFile = appendFile;
    }
    expect(await readFile(join(dir, FEED_KEYS_FILE), 'utf8')).toBe(before);
    const keys = await store.currentKeys(['user:ann', 'user:cat']);
    await store.close();
    const reopened = await FileFeedKeyStore.open(dir);
    const wanted = [bob, keys.get('user:ann')!, keys.get('user:cat')!];
    expect([...(await reopened.find(wanted)).keys()].sort()).toEqual(wanted.map((key) => key.id).sort());
    await reopened.close();
  });

  it('keeps a key it could not destroy durably: a failed rewrite fails, and a retry finds the key and destroys it', async () => {
    const store = await FileFeedKeyStore.open(dir);
    const bob = (await store.currentKeys(['user:bob'])).get('user:bob')!;
    // The rewrite's temp file cannot be created: as when the disk is full.
    const temp = join(dir, `${FEED_KEYS_FILE}.tmp`);
    await mkdir(temp);
    await expect(store.destroy([bob])).rejects.toThrow();
    expect((await store.keysOf('user:bob')).map((key) => key.id)).toEqual([bob.id]);
    expect((await store.find([bob])).has(bob.id)).toBe(true);
    expect(await readFile(join(dir, FEED_KEYS_FILE), 'utf8')).toContain(bob.secret.toString('base64'));
    // New content of the feed is not sealed with a key being destroyed.
    expect((await store.currentKeys(['user:bob'])).get('user:bob')!.id).not.toBe(bob.id);
    await rmdir(temp);
    await store.destroy(await store.keysOf('user:bob'));
    expect(await store.keysOf('user:bob')).toEqual([]);
    expect(await readFile(join(dir, FEED_KEYS_FILE), 'utf8')).not.toContain(bob.secret.toString('base64'));
    await store.close();
  });

  it('refuses to open a key file with a line it cannot read before the last, naming the file and the line', async () => {
    const good = '{"id":"k1","feed":"user:a","secret":"c2VjcmV0"}\n';
    for (const bad of ['{"id":"k2","feed":"user:b","sec\n', '{"id":"k2","feed":"user:b"}\n', 'not json\n']) {
      await writeFile(join(dir, FEED_KEYS_FILE), good + bad + good.replace(/k1/g, 'k3'));
      const opening = FileFeedKeyStore.open(dir);
      await expect(opening).rejects.toBeInstanceOf(UnreadableKeyFileError);
      await expect(opening).rejects.toThrow(`${join(dir, FEED_KEYS_FILE)} line 2`);
    }
  });
});
