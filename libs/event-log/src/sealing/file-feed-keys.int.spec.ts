import { appendFile, mkdir, mkdtemp, open, readFile, rm, rmdir, writeFile, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FileFeedKeyStore, FEED_KEYS_FILE, UnreadableKeyFileError } from './file-feed-keys.js';
import type { FeedId } from '@feedmill/contracts';
import type { FeedKey } from './sealed-content.js';

/** A page as a disk writes it: a power loss keeps or loses whole pages of a write. */
const PAGE = 4096;

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

  /** A store holding bob's key, then the bytes of an append of `feeds.length` more keys written after it. */
  async function fileWithAppend(feeds: FeedId[]): Promise<{ bob: FeedKey; before: number; after: Buffer }> {
    const store = await FileFeedKeyStore.open(dir);
    const bob = (await store.currentKeys(['user:bob'])).get('user:bob')!;
    const before = (await readFile(join(dir, FEED_KEYS_FILE))).length;
    await store.currentKeys(feeds);
    await store.close();
    return { bob, before, after: await readFile(join(dir, FEED_KEYS_FILE)) };
  }

  const manyFeeds: FeedId[] = Array.from({ length: 120 }, (_, index) => `user:f${index}` as const);

  it('cuts an append of several keys whose first page a power loss left unwritten, whole key lines after it included, and keeps every key before it', async () => {
    const { bob, before, after } = await fileWithAppend(manyFeeds);
    expect(after.length - before).toBeGreaterThan(2 * PAGE);
    // The append's first page (to the next page boundary) never reached the disk; its later pages did.
    after.fill(0, before, Math.ceil((before + 1) / PAGE) * PAGE);
    await writeFile(join(dir, FEED_KEYS_FILE), after);
    const reopened = await FileFeedKeyStore.open(dir);
    expect((await reopened.find([bob])).has(bob.id)).toBe(true);
    expect((await Promise.all(manyFeeds.map((feed) => reopened.keysOf(feed)))).flat()).toEqual([]);
    expect((await readFile(join(dir, FEED_KEYS_FILE))).length).toBe(before);
    // The next append follows the last whole one, and reads back.
    const ann = (await reopened.currentKeys(['user:ann'])).get('user:ann')!;
    await reopened.close();
    const again = await FileFeedKeyStore.open(dir);
    expect([...(await again.find([bob, ann])).keys()].sort()).toEqual([bob.id, ann.id].sort());
    await again.close();
  });

  it('cuts a last append that holds fewer lines than its frame announced, or whose only line holds unwritten zeros', async () => {
    const { bob, before, after } = await fileWithAppend(['user:ann', 'user:cat', 'user:dan']);
    const lastLine = after.lastIndexOf('\n', after.length - 2) + 1;
    await writeFile(join(dir, FEED_KEYS_FILE), after.subarray(0, lastLine));
    let reopened = await FileFeedKeyStore.open(dir);
    expect([(await reopened.find([bob])).size, (await reopened.keysOf('user:ann')).length]).toEqual([1, 0]);
    expect((await readFile(join(dir, FEED_KEYS_FILE))).length).toBe(before);
    // One key, its line whole but its first bytes unwritten.
    await reopened.currentKeys(['user:eve']);
    await reopened.close();
    const file = await readFile(join(dir, FEED_KEYS_FILE));
    file.fill(0, before, before + 24);
    await writeFile(join(dir, FEED_KEYS_FILE), file);
    reopened = await FileFeedKeyStore.open(dir);
    expect([(await reopened.find([bob])).size, (await reopened.keysOf('user:eve')).length]).toEqual([1, 0]);
    await reopened.close();
  });

  it('refuses unwritten zeros that a later append follows: that append was acknowledged after them, and so was theirs', async () => {
    const { before, after } = await fileWithAppend(manyFeeds);
    const later = Buffer.from(`{"keys":1}\n{"id":"k9","feed":"user:z","secret":"c2VjcmV0"}\n`);
    after.fill(0, before, Math.ceil((before + 1) / PAGE) * PAGE);
    await writeFile(join(dir, FEED_KEYS_FILE), Buffer.concat([after, later]));
    const line = after.subarray(0, before).toString().split('\n').length;
    await expect(FileFeedKeyStore.open(dir)).rejects.toThrow(`${join(dir, FEED_KEYS_FILE)} line ${line}`);
  });

  it('reads a key file written before appends had frames', async () => {
    const lines = ['{"id":"k1","feed":"user:a","secret":"c2VjcmV0"}', '{"id":"k2","feed":"user:b","secret":"c2VjcmV0"}'];
    await writeFile(join(dir, FEED_KEYS_FILE), lines.join('\n') + '\n');
    const store = await FileFeedKeyStore.open(dir);
    expect([...(await store.find([{ feed: 'user:a', id: 'k1' }, { feed: 'user:b', id: 'k2' }])).keys()]).toEqual(['k1', 'k2']);
    await store.close();
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

  it('keeps in the file the keys of an append that was waiting when a destroy was asked for', async () => {
    const store = await FileFeedKeyStore.open(dir);
    const ann = (await store.currentKeys(['user:ann'])).get('user:ann')!;
    // Asked for in one tick: bob's append, then cat's waiting behind it, then the rewrite that destroys ann's key.
    const [, catKeys] = await Promise.all([store.currentKeys(['user:bob']), store.currentKeys(['user:cat']), store.destroy([ann])]);
    const cat = catKeys.get('user:cat')!;
    await store.close();
    const reopened = await FileFeedKeyStore.open(dir);
    expect([...(await reopened.find([ann, cat])).keys()]).toEqual([cat.id]);
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
