import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, appendFile, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeEventLogContract } from '../contract/event-log.contract.js';
import { FileEventLog } from './file-event-log.js';
import { DirectoryLockedError } from './directory-lock.js';
import { CorruptLogError } from './file-log-errors.js';
import { readLogFile } from './log-file-segments.js';
import { MOST_KEPT_DECODED } from './log-records.js';

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

  it('after a power loss that left a page of its last write unwritten, with whole records after it, cuts that write and keeps the ones before', async () => {
    const log = await FileEventLog.open({ dir });
    const kept = Array.from({ length: 5 }, (_, n) => ({ n, text: 'k'.repeat(200) }));
    for (const data of kept) await log.appendToStream('s', [{ type: 'T', data }]);
    const file = join(dir, 'events.log');
    const acknowledged = (await stat(file)).size;
    // One write of 40 records, about 12 KiB: the last write, whose fsync a power loss cut short.
    await log.appendToStream('s', Array.from({ length: 40 }, (_, n) => ({ type: 'T', data: { n: 100 + n, text: 't'.repeat(300) } })));
    await log.close();
    const bytes = await readFile(file);
    const page = Math.ceil((acknowledged + 1) / 4096) * 4096;
    expect(page + 4096).toBeLessThan(bytes.length - 1000);
    bytes.fill(0, page, page + 4096);
    await writeFile(file, bytes);

    const repairs: Array<{ keptBytes: number; cutBytes: number }> = [];
    const reopened = await FileEventLog.open({ dir, onTailRepaired: (repair) => repairs.push(repair) });
    expect(repairs).toEqual([{ keptBytes: acknowledged, cutBytes: bytes.length - acknowledged }]);
    expect((await reopened.readStream('s')).map((record) => record.data)).toEqual(kept);
    expect(await reopened.appendToStream('s', [{ type: 'T', data: { n: 'after' } }], { expectedVersion: 4 })).toEqual({ nextExpectedVersion: 5, position: 6 });
    await reopened.close();

    // The same page unwritten in a write that another followed is damage to acknowledged records: refused.
    const earlier = await readFile(file);
    const withLater = await FileEventLog.open({ dir });
    await withLater.appendToStream('s', Array.from({ length: 40 }, (_, n) => ({ type: 'T', data: { n: 200 + n, text: 'u'.repeat(300) } })));
    await withLater.appendToStream('s', [{ type: 'T', data: { n: 'last' } }]);
    await withLater.close();
    const damaged = await readFile(file);
    const inner = Math.ceil((earlier.length + 1) / 4096) * 4096;
    damaged.fill(0, inner, inner + 4096);
    await writeFile(file, damaged);
    await expect(FileEventLog.open({ dir })).rejects.toBeInstanceOf(CorruptLogError);
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

  describe('read at open in segments (a file past 2 GiB cannot be read in one go; here, segments of 1 KiB)', () => {
    const segmentBytes = 1024;
    /** 300 events of 40 to 400 bytes of data in three streams, as the file holds them. */
    async function written(): Promise<{ file: string; data: unknown[] }> {
      const log = await FileEventLog.open({ dir });
      const data = Array.from({ length: 300 }, (_, n) => ({ n, text: 'x'.repeat((n * 37) % 360) }));
      for (const [n, item] of data.entries()) await log.appendToStream(`s${n % 3}`, [{ type: 'T', data: item }]);
      await log.close();
      return { file: join(dir, 'events.log'), data };
    }
    const everything = async (log: FileEventLog) => (await Promise.all(['s0', 's1', 's2'].map((stream) => log.readStream(stream)))).flat().sort((a, b) => a.position - b.position);

    it('reads back every record, by stream and by position, and goes on appending after them', async () => {
      const { file, data } = await written();
      // No read at open is larger than a segment, and segments end where records do.
      const read = await readLogFile(file, segmentBytes);
      expect(read.segments.length).toBeGreaterThan(30);
      expect(Math.max(...read.segments.map((segment) => segment.bytes.length))).toBeLessThanOrEqual(segmentBytes);
      expect(read.segments.reduce((bytes, segment) => bytes + segment.bytes.length, 0)).toBe((await stat(file)).size);
      expect(read.damage).toEqual({ kind: 'none' });
      const log = await FileEventLog.open({ dir, segmentBytes });
      expect((await everything(log)).map((record) => [record.position, record.data])).toEqual(data.map((item, n) => [n + 1, item]));
      // And in order of position, as a subscriber reads them.
      const subscribed: unknown[] = [];
      const subscription = log.subscribeToAll({ maxBatch: 7, onEvents: (records) => void subscribed.push(...records.map((record) => [record.position, record.data])) });
      await subscription.caughtUp;
      await subscription.stop();
      expect(subscribed).toEqual(data.map((item, n) => [n + 1, item]));
      expect(await log.appendToStream('s1', [{ type: 'T', data: { n: 300 } }], { expectedVersion: 99 })).toEqual({ nextExpectedVersion: 100, position: 301 });
      await log.close();
      const again = await FileEventLog.open({ dir, segmentBytes });
      expect((await everything(again)).map((record) => record.data)).toEqual([...data, { n: 300 }]);
      await again.close();
    });

    it('cuts a torn tail in its last segment, and refuses damage that whole records follow, naming its byte', async () => {
      const { file, data } = await written();
      const whole = (await readFile(file)).length;
      await truncate(file, whole - 5);
      const repairs: Array<{ keptBytes: number; cutBytes: number }> = [];
      const log = await FileEventLog.open({ dir, segmentBytes, onTailRepaired: (repair) => repairs.push(repair) });
      expect((await everything(log)).map((record) => record.data)).toEqual(data.slice(0, -1));
      expect(repairs).toEqual([{ keptBytes: expect.any(Number), cutBytes: expect.any(Number) }]);
      expect(repairs[0]!.keptBytes + repairs[0]!.cutBytes).toBe(whole - 5);
      await log.close();

      // A byte of a record in the middle of the file, segments before the end, changed.
      const bytes = await readFile(file);
      const damagedAt = Math.floor(bytes.length / 2);
      bytes[damagedAt] = bytes[damagedAt]! ^ 0xff;
      await writeFile(file, bytes);
      const refused = await FileEventLog.open({ dir, segmentBytes }).catch((error: unknown) => error);
      expect(refused).toBeInstanceOf(CorruptLogError);
      expect((refused as CorruptLogError).offset).toBeLessThanOrEqual(damagedAt);
      expect((refused as CorruptLogError).offset).toBeGreaterThan(damagedAt - 420);
    });
  });

  it('saves a consumer’s checkpoints made at once each whole: the last one renamed stands, and it reads back', async () => {
    const log = await FileEventLog.open({ dir });
    const positions = [1_000, 99, 123_456, 7];
    await Promise.all(positions.map((position) => log.saveCheckpoint('projector', position)));
    expect(positions).toContain(await log.loadCheckpoint('projector'));
    await log.saveCheckpoint('projector', 5);
    expect(await log.loadCheckpoint('projector')).toBe(5);
    await log.close();
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

  describe('subscribers replaying it together (`catchUpTogether`), over more records than it keeps decoded', () => {
    // Appended a thousand at a time.
    const records = (Math.floor(MOST_KEPT_DECODED / 1_000) + 30) * 1_000;
    const dataOf = (events: readonly { data: unknown }[]) => events.map((event) => event.data);
    const append = async (log: FileEventLog, count: number) => {
      for (let i = 0; i < count; i += 1_000) await log.appendToStream('s', Array.from({ length: 1_000 }, (_, j) => ({ type: 'T', data: { i: i + j } })));
    };
    beforeEach(async () => {
      const log = await FileEventLog.open({ dir });
      await append(log, records);
      await log.close();
    });

    it('keeps the faster within those records of the slowest, which then reads the objects the faster decoded', async () => {
      const log = await FileEventLog.open({ dir });
      const slowData: unknown[] = [];
      const fastData: unknown[] = [];
      let farthestAhead = 0;
      const slow = log.subscribeToAll({
        maxBatch: 1_000,
        catchUpTogether: true,
        onEvents: async (events) => {
          slowData.push(...dataOf(events));
          await new Promise((resolve) => setTimeout(resolve, 5));
        },
      });
      const fast = log.subscribeToAll({
        maxBatch: 1_000,
        catchUpTogether: true,
        onEvents: (events) => {
          fastData.push(...dataOf(events));
          farthestAhead = Math.max(farthestAhead, events[events.length - 1]!.position - slow.position);
        },
      });
      await Promise.all([slow.caughtUp, fast.caughtUp]);
      expect(farthestAhead).toBeGreaterThan(MOST_KEPT_DECODED / 2);
      expect(farthestAhead).toBeLessThanOrEqual(MOST_KEPT_DECODED);
      expect(slowData).toHaveLength(records);
      expect(fastData).toHaveLength(records);
      // Each record decoded once: the very objects, not equal copies.
      expect(slowData.filter((data, i) => data !== fastData[i])).toHaveLength(0);
      await log.close();
    });

    it('lets the faster read on when the slowest waits for it, after two seconds held, though a live subscriber reads new records meanwhile', async () => {
      const log = await FileEventLog.open({ dir });
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      const slow = log.subscribeToAll({ maxBatch: 1_000, catchUpTogether: true, onEvents: () => released });
      const fast = log.subscribeToAll({ maxBatch: 1_000, catchUpTogether: true, onEvents: () => undefined });
      // Following the head: each of its reads wakes the held one, which must still count its hold from the start.
      const live = log.subscribeToAll({ from: records, onEvents: () => undefined });
      const appending = setInterval(() => void log.appendToStream('live', [{ type: 'L', data: {} }]), 50);
      try {
        const started = performance.now();
        await fast.caughtUp;
        const held = performance.now() - started;
        expect(held).toBeGreaterThanOrEqual(1_900);
        expect(held).toBeLessThan(6_000);
        expect(slow.position).toBe(0);
        expect(live.position).toBeGreaterThan(records);
      } finally {
        clearInterval(appending);
        release();
      }
      await slow.caughtUp;
      await log.close();
    });

    it('holds neither a subscription without it nor one two leads or more ahead of the slowest', async () => {
      const log = await FileEventLog.open({ dir });
      await append(log, MOST_KEPT_DECODED);
      // The slowest replays from the start, slowly.
      const slow = log.subscribeToAll({ maxBatch: 200, catchUpTogether: true, onEvents: () => new Promise((resolve) => setTimeout(resolve, 20)) });
      const firstRead = (options: { from: number; catchUpTogether?: boolean }) =>
        new Promise<number>((resolve) => {
          const started = performance.now();
          const subscription = log.subscribeToAll({ ...options, maxBatch: 1, onEvents: () => void subscription.stop().then(() => resolve(performance.now() - started)) });
        });
      // A lookup of one record near the head (as reader isolation makes), and a projection restored near the head.
      expect(await firstRead({ from: records })).toBeLessThan(1_000);
      expect(await firstRead({ from: 2 * MOST_KEPT_DECODED + 1_000, catchUpTogether: true })).toBeLessThan(1_000);
      expect(slow.position).toBeLessThan(MOST_KEPT_DECODED);
      await log.close();
    });
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

  it('lets exactly one of several processes starting at once own the directory, also over a lock file a killed owner left, and the next one once the owner is killed', async () => {
    // Each child opens the log (the built library), says whether it could, and holds it until killed or `holdMs` passed:
    // long enough that a child slow to load on a busy machine (CI runs two suites at once) still finds it held.
    const child = (holdMs = 2_000) =>
      spawn(
        process.execPath,
        [
          '--input-type=module',
          '-e',
          `import { FileEventLog } from '@feedmill/event-log';
           const at = Number(process.argv[1]);
           await new Promise((r) => setTimeout(r, at - Date.now()));
           try { const log = await FileEventLog.open({ dir: ${JSON.stringify(dir)} }); console.log('opened'); await new Promise((r) => setTimeout(r, Number(process.argv[2]))); await log.close(); }
           catch (error) { console.log(error.name); }`,
          String(Date.now() + 600),
          String(holdMs),
        ],
        { cwd: process.cwd(), stdio: ['ignore', 'pipe', 'inherit'] },
      );
    const outcome = (started: ReturnType<typeof child>) =>
      new Promise<string>((resolve) => {
        let out = '';
        started.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
        started.on('exit', () => resolve(out.trim()));
      });
    for (let round = 0; round < 3; round++) {
      // A lock file as a killed owner leaves it (another pid in it, or none yet), from the second round on.
      if (round > 0) await writeFile(join(dir, 'LOCK'), round === 1 ? '999999' : '');
      const outcomes = (await Promise.all([child(), child(), child(), child()].map(outcome))).sort();
      expect(outcomes).toEqual(['DirectoryLockedError', 'DirectoryLockedError', 'DirectoryLockedError', 'opened']);
    }
    // A live owner keeps the directory whatever its lock file says: no pid yet (the moment
    // between creating the file and writing it), or a pid that runs no more.
    const owner = child(60_000);
    const opened = new Promise<void>((resolve) => owner.stdout!.once('data', () => resolve()));
    await opened;
    for (const content of ['', '999999']) {
      await writeFile(join(dir, 'LOCK'), content);
      await expect(FileEventLog.open({ dir })).rejects.toBeInstanceOf(DirectoryLockedError);
    }
    // An owner killed with SIGKILL holds nothing: this process owns the directory at once.
    owner.kill('SIGKILL');
    await new Promise((resolve) => owner.once('exit', resolve));
    const log = await FileEventLog.open({ dir });
    await log.close();
  }, 20_000);
});
