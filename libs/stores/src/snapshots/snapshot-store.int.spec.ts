import { mkdtemp, readdir, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeSnapshot, SNAPSHOT_FORMAT_VERSION } from './snapshot-file.js';
import { SnapshotStore } from './snapshot-store.js';

let dir: string;
let warnings: string[];
let store: SnapshotStore;
const logger = { log: () => undefined, warn: (message: string) => warnings.push(message) };
const payloadOf = (position: number) => Buffer.from(`state at ${position}`);
const fileOf = (name: string, position: number) => join(dir, `${name}.${String(position).padStart(16, '0')}.snapshot`);

beforeEach(async () => {
  dir = join(await mkdtemp(join(tmpdir(), 'feedmill-snapshots-')), 'snapshots');
  warnings = [];
  store = new SnapshotStore(dir, logger);
});
afterEach(() => rm(join(dir, '..'), { recursive: true, force: true }));

async function saved(name: string, ...positions: number[]): Promise<void> {
  for (const position of positions) await store.save(name, position, payloadOf(position));
}

describe('SnapshotStore', () => {
  it('finds nothing in a directory that does not exist yet', async () => {
    expect(await store.load('content')).toBeUndefined();
    expect(warnings).toEqual([]);
  });

  it('loads the newest snapshot of a name, not another name', async () => {
    await saved('content', 10, 30, 20);
    await saved('graph', 40);
    const loaded = await new SnapshotStore(dir, logger).load('content');
    expect(loaded?.position).toBe(30);
    expect(Buffer.from(loaded!.payload).toString()).toBe('state at 30');
    expect(warnings).toEqual([]);
  });

  it('keeps the newest two snapshots of a name and deletes older ones as it writes', async () => {
    await saved('content', 10, 20, 30, 40);
    await saved('graph', 5);
    expect((await readdir(dir)).sort()).toEqual(['content.0000000000000030.snapshot', 'content.0000000000000040.snapshot', 'graph.0000000000000005.snapshot']);
  });

  it('skips a snapshot whose checksum fails, says which file and why, and loads the one before', async () => {
    await saved('content', 10, 20);
    const file = await readFile(fileOf('content', 20));
    file[file.length - 40]! ^= 0xff;
    await writeFile(fileOf('content', 20), file);
    expect((await new SnapshotStore(dir, logger).load('content'))?.position).toBe(10);
    expect(warnings).toEqual([`skipped snapshot ${fileOf('content', 20)}: checksum mismatch`]);
  });

  it('skips a truncated snapshot', async () => {
    await saved('content', 10, 20);
    await truncate(fileOf('content', 20), 30);
    expect((await new SnapshotStore(dir, logger).load('content'))?.position).toBe(10);
    expect(warnings).toEqual([expect.stringMatching(new RegExp(`^skipped snapshot ${fileOf('content', 20)}: truncated`))]);
  });

  it('skips a snapshot of another format version', async () => {
    await saved('content', 10);
    const other = Buffer.concat(encodeSnapshot({ name: 'content', position: 20, payload: payloadOf(20) }));
    other.writeUInt32LE(SNAPSHOT_FORMAT_VERSION + 1, 8);
    await writeFile(fileOf('content', 20), other);
    expect((await new SnapshotStore(dir, logger).load('content'))?.position).toBe(10);
    expect(warnings).toEqual([expect.stringContaining(`format version ${SNAPSHOT_FORMAT_VERSION + 1}`)]);
  });

  it('skips a file whose header names another position than its file name', async () => {
    await saved('content', 10, 20);
    await writeFile(fileOf('content', 30), await readFile(fileOf('content', 20)));
    expect((await new SnapshotStore(dir, logger).load('content'))?.position).toBe(20);
    expect(warnings).toEqual([expect.stringContaining('the file name says content at 30')]);
  });

  it('skips every bad snapshot and finds none when none is good', async () => {
    await saved('content', 10);
    await truncate(fileOf('content', 10), 0);
    expect(await new SnapshotStore(dir, logger).load('content')).toBeUndefined();
    expect(warnings).toHaveLength(1);
  });

  it('on load, deletes files older than the newest two good ones, and temp files a crash left', async () => {
    await saved('content', 40);
    // Older files written by hand, as a previous version of the process might have left them.
    for (const position of [10, 20, 30]) await writeFile(fileOf('content', position), Buffer.concat(encodeSnapshot({ name: 'content', position, payload: payloadOf(position) })));
    await truncate(fileOf('content', 40), 10);
    await writeFile(`${fileOf('content', 50)}.999.tmp`, 'half a snapshot');
    expect((await new SnapshotStore(dir, logger).load('content'))?.position).toBe(30);
    // 40 is bad (kept for a look, pruned once two newer good ones exist), 30 and 20 are the good ones kept.
    expect((await readdir(dir)).sort()).toEqual(['content.0000000000000020.snapshot', 'content.0000000000000030.snapshot', 'content.0000000000000040.snapshot']);
  });

  it('writes the file whole: no temp file is left, and a rewrite at the same position replaces it', async () => {
    await saved('graph', 7);
    await store.save('graph', 7, Buffer.from('again'));
    expect(await readdir(dir)).toEqual(['graph.0000000000000007.snapshot']);
    expect(Buffer.from((await new SnapshotStore(dir, logger).load('graph'))!.payload).toString()).toBe('again');
  });

  it('refuses a name that could leave the directory', async () => {
    await expect(store.save('../content', 1, payloadOf(1))).rejects.toThrow(/must match/);
  });
});
