import { mkdtemp, rm, stat, appendFile, truncate } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeEventLogContract } from '../contract/event-log.contract.js';
import { FileEventLog } from './file-event-log.js';
import { DirectoryLockedError } from './directory-lock.js';
import { CorruptLogError } from './file-log-errors.js';

describeEventLogContract('file', {
  async open() {
    const dir = await mkdtemp(join(tmpdir(), 'feedmill-filelog-'));
    return {
      log: await FileEventLog.open({ dir }),
      reopen: () => FileEventLog.open({ dir }),
      dispose: () => rm(dir, { recursive: true, force: true }),
    };
  },
});

describe('FileEventLog on disk', () => {
  let dir: string;
  beforeEach(async () => (dir = await mkdtemp(join(tmpdir(), 'feedmill-filelog-'))));
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('cuts a torn record at the tail and keeps everything before it', async () => {
    const log = await FileEventLog.open({ dir });
    await log.appendToStream('s', [{ type: 'T', data: { n: 1 } }]);
    await log.appendToStream('s', [{ type: 'T', data: { n: 2 } }]);
    await log.close();
    const file = join(dir, 'events.log');
    const whole = (await stat(file)).size;
    await truncate(file, whole - 3); // the last record lost its final bytes
    const repairs: Array<{ keptBytes: number; cutBytes: number }> = [];
    const reopened = await FileEventLog.open({ dir, onTailRepaired: (r) => repairs.push(r) });
    expect((await reopened.readStream('s')).map((e) => e.data)).toEqual([{ n: 1 }]);
    expect(repairs).toHaveLength(1);
    expect(repairs[0]!.keptBytes + repairs[0]!.cutBytes).toBe(whole - 3);
    // The cut record's revision is free again and appends go on from the repaired tail.
    expect(await reopened.appendToStream('s', [{ type: 'T', data: { n: 3 } }], { expectedVersion: 0 })).toEqual({
      nextExpectedVersion: 1,
      position: 2,
    });
    await reopened.close();
  });

  it('refuses to open a log whose last whole record fails its checksum, naming the byte to cut at', async () => {
    const log = await FileEventLog.open({ dir });
    await log.appendToStream('s', [{ type: 'T', data: { n: 1 } }]);
    await log.close();
    const good = (await stat(join(dir, 'events.log'))).size;
    // A whole record (length 20, 20 bytes) whose checksum does not match: no crash writes that.
    await appendFile(join(dir, 'events.log'), Buffer.from([20, 0, 0, 0, 1, 2, 3, 4, ...Buffer.from('{"s":"a record"}....')]));
    await expect(FileEventLog.open({ dir })).rejects.toThrow(new RegExp(`record at byte ${good} \\(log position 2\\).*truncate -s ${good}`));
    await expect(FileEventLog.open({ dir })).rejects.toBeInstanceOf(CorruptLogError);
  });

  it('shares one fsync among appends that arrive together, acknowledges each, and says how many shared each', async () => {
    const commits: Array<{ appends: number; seconds: number }> = [];
    const log = await FileEventLog.open({ dir, onGroupCommit: (commit) => commits.push(commit) });
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) => log.appendToStream(`s${i % 10}`, [{ type: 'T', data: { i } }])),
    );
    expect(new Set(results.map((r) => r.position)).size).toBe(200);
    expect(await log.headPosition()).toBe(200);
    expect(commits.reduce((sum, commit) => sum + commit.appends, 0)).toBe(200);
    expect(commits.length).toBeLessThan(200);
    for (const commit of commits) expect(commit.seconds).toBeGreaterThan(0);
    await log.close();
  });

  it("reads a stream's records, on disk and appended since, and not another record's data that quotes them", async () => {
    const odd = 'odd "stream" \\ ü';
    const log = await FileEventLog.open({ dir });
    await log.appendToStream('a', [{ type: 'T', data: { n: 0 } }]);
    // Data that holds the exact bytes a record of stream 'a' starts with.
    await log.appendToStream('b', [{ type: 'T', data: { quote: '{"s":"a","r":' } }]);
    await log.appendToStream(odd, [{ type: 'T', data: { n: 1 } }]);
    await log.close();
    const reopened = await FileEventLog.open({ dir });
    await reopened.appendToStream('a', [{ type: 'T', data: { n: 2 } }], { expectedVersion: 0 });
    await reopened.appendToStream(odd, [{ type: 'T', data: { n: 3 } }], { expectedVersion: 0 });
    expect((await reopened.readStream('a')).map((e) => [e.position, e.revision, e.data])).toEqual([
      [1, 0, { n: 0 }],
      [4, 1, { n: 2 }],
    ]);
    expect((await reopened.readStream(odd)).map((e) => e.data)).toEqual([{ n: 1 }, { n: 3 }]);
    expect(await reopened.readStream('a"')).toEqual([]);
    await reopened.close();
  });

  it('decodes a record once for every subscriber still to read it, however far apart they are', async () => {
    const log = await FileEventLog.open({ dir });
    await Promise.all(Array.from({ length: 5_000 }, (_, i) => log.appendToStream(`s${i % 7}`, [{ type: 'T', data: { i } }])));
    await log.close();
    const reopened = await FileEventLog.open({ dir });
    const seen = (into: unknown[][]) => (events: readonly { data: unknown }[]) => void into.push(events.map((e) => e.data));
    const slow: unknown[][] = [];
    const fast: unknown[][] = [];
    // The slow one stands still until the fast one has read everything.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const slowSubscription = reopened.subscribeToAll({ maxBatch: 100, onEvents: async (events) => (await released, seen(slow)(events)) });
    const fastSubscription = reopened.subscribeToAll({ maxBatch: 100, onEvents: seen(fast) });
    await fastSubscription.caughtUp;
    release();
    await slowSubscription.caughtUp;
    const [slowData, fastData] = [slow.flat(), fast.flat()];
    expect(fastData).toHaveLength(5_000);
    expect(slowData).toHaveLength(5_000);
    for (let i = 0; i < 5_000; i++) expect(slowData[i]).toBe(fastData[i]);
    // A subscriber that starts after everyone has read them decodes them again.
    const late: unknown[][] = [];
    const lateSubscription = reopened.subscribeToAll({ onEvents: seen(late) });
    await lateSubscription.caughtUp;
    expect(late.flat()[0]).toEqual(fastData[0]);
    await reopened.close();
  });

  it('marks the records it reads back, and those appended through it, as trusted', async () => {
    const log = await FileEventLog.open({ dir });
    await log.appendToStream('s', [{ type: 'T', data: { n: 1 } }]);
    expect((await log.readStream('s')).map((e) => e.trusted)).toEqual([true]);
    await log.close();
    const reopened = await FileEventLog.open({ dir });
    expect((await reopened.readStream('s')).map((e) => e.trusted)).toEqual([true]);
    await reopened.close();
  });

  it('refuses a second owner of the same directory while the first runs', async () => {
    const log = await FileEventLog.open({ dir });
    await expect(FileEventLog.open({ dir })).rejects.toBeInstanceOf(DirectoryLockedError);
    await log.close();
  });
});
