import { appendFile, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import type { RecordedEvent } from '../../event-log.port.js';
import { FileEventLog } from '../file-event-log.js';
import { CorruptLogError, LogNotWritableError, LogWriteFailedError } from '../file-log-errors.js';
import { smallDisk } from './small-disk.js';

/**
 * The file log under the damage a disk and a crash can do: cut tails, flipped bits, zeros, a
 * full disk and a read-only directory. Whatever happens, it either refuses to open with an
 * error that says why, or serves exactly a prefix of what it acknowledged, and it never cuts
 * a record a crash cannot have torn.
 */

let dir: string;
beforeEach(async () => (dir = await mkdtemp(join(tmpdir(), 'feedmill-logfaults-'))));
afterEach(() => rm(dir, { recursive: true, force: true }));

const dataOf = (n: number) => ({ n, text: `record ${n} ${'é'.repeat(n % 17)}` });

/** Writes `count` records in batches as concurrent appends make them, and gives back the file's bytes. */
async function writeLog(count: number): Promise<Buffer> {
  const log = await FileEventLog.open({ dir });
  for (let n = 0; n < count; n += 7) {
    await Promise.all(Array.from({ length: Math.min(7, count - n) }, (_, i) => log.appendToStream(`s${(n + i) % 3}`, [{ type: 'T', data: dataOf(n + i) }])));
  }
  await log.close();
  return readFile(join(dir, 'events.log'));
}

async function everyEvent(log: FileEventLog): Promise<RecordedEvent[]> {
  const events: RecordedEvent[] = [];
  const subscription = log.subscribeToAll({ onEvents: (batch) => void events.push(...batch) });
  await subscription.caughtUp;
  await subscription.stop();
  return events;
}

/** Opens the log as it lies on disk: the events it serves, or the error it refuses with. */
async function openAsItLies(): Promise<{ served: unknown[]; cut: number } | { refused: Error }> {
  let cut = 0;
  try {
    const log = await FileEventLog.open({ dir, onTailRepaired: ({ cutBytes }) => (cut = cutBytes) });
    const served = (await everyEvent(log)).map((e) => e.data);
    // A repaired log takes appends again, right after what it kept.
    const { position } = await log.appendToStream('after', [{ type: 'T', data: 'after' }]);
    expect(position).toBe(served.length + 1);
    await log.close();
    return { served, cut };
  } catch (error) {
    return { refused: error as Error };
  }
}

const written = (count: number) => Array.from({ length: count }, (_, n) => n).sort((a, b) => a - b);

/** The group writes of a log file as the log writes them: where each starts and ends, and how many records it holds. */
function writesOf(bytes: Buffer): Array<{ start: number; end: number; records: number }> {
  const writes: Array<{ start: number; end: number; records: number }> = [];
  for (let at = 0; at < bytes.length; at += 8 + bytes.readUInt32LE(at)) {
    if (bytes.toString('latin1', at + 8, at + 13) === '{"g":') {
      const frameEnd = at + 8 + bytes.readUInt32LE(at);
      writes.push({ start: at, end: frameEnd + Number(bytes.toString('latin1', at + 13, frameEnd - 1)), records: 0 });
    } else writes[writes.length - 1]!.records++;
  }
  return writes;
}

it('recovers from any cut inside the last record, cutting the write it was in and keeping every write before it', async () => {
  const whole = await writeLog(40);
  const served = (await openAsItLies()) as { served: Array<{ n: number }> };
  const order = served.served.map((d) => d.n);
  expect(order.slice().sort((a, b) => a - b)).toEqual(written(40));
  const lastLength = whole.length - whole.lastIndexOf(Buffer.from('{"s":')) + 8;
  // None of the last write was acknowledged: all of it goes, its frame and whole records too.
  const lastWrite = writesOf(whole).at(-1)!;
  expect(lastWrite.records).toBeGreaterThan(1);
  await fc.assert(
    fc.asyncProperty(fc.integer({ min: 1, max: lastLength - 1 }), async (cut) => {
      await writeFile(join(dir, 'events.log'), whole.subarray(0, whole.length - cut));
      const result = await openAsItLies();
      expect(result).toEqual({ served: order.slice(0, 40 - lastWrite.records).map((n) => dataOf(n)), cut: whole.length - cut - lastWrite.start });
    }),
    { seed: 13, numRuns: 60 },
  );
});

it('recovers from a tail of zeros (a file extended but never written), which read as records of length 0', async () => {
  const whole = await writeLog(10);
  for (const zeros of [8, 5, 8192]) {
    await writeFile(join(dir, 'events.log'), Buffer.concat([whole, Buffer.alloc(zeros)]));
    const result = await openAsItLies();
    expect(result).toMatchObject({ cut: zeros });
    expect((result as { served: unknown[] }).served).toHaveLength(10);
  }
});

it('refuses to open after any bit flip, and serves nothing of a damaged log', async () => {
  const whole = await writeLog(30);
  await fc.assert(
    fc.asyncProperty(fc.integer({ min: 0, max: whole.length - 1 }), fc.integer({ min: 0, max: 7 }), async (at, bit) => {
      const damaged = Buffer.from(whole);
      damaged[at] = damaged[at]! ^ (1 << bit);
      await writeFile(join(dir, 'events.log'), damaged);
      const result = await openAsItLies();
      expect(result).toEqual({ refused: expect.any(CorruptLogError) });
      // The file is left as it was, for the operator to look at.
      expect((await readFile(join(dir, 'events.log'))).equals(damaged)).toBe(true);
    }),
    { seed: 1313, numRuns: 150 },
  );
});

it('under cuts and flips together, serves a prefix of what it wrote or refuses, and cuts only a torn last record', async () => {
  const whole = await writeLog(25);
  const writes = writesOf(whole);
  const servedInOrder = ((await openAsItLies()) as { served: unknown[] }).served;
  await fc.assert(
    fc.asyncProperty(fc.integer({ min: 0, max: whole.length }), fc.array(fc.nat(), { maxLength: 3 }), async (length, flips) => {
      const damaged = Buffer.from(whole.subarray(0, length));
      for (const flip of flips) if (damaged.length > 0) damaged[flip % damaged.length] = damaged[flip % damaged.length]! ^ 0x04;
      await writeFile(join(dir, 'events.log'), damaged);
      const result = await openAsItLies();
      // The records of the writes the cut left whole: a write it cut into goes whole.
      const wholeRecords = writes.filter((write) => write.end <= length).reduce((sum, write) => sum + write.records, 0);
      if ('refused' in result) {
        expect(result.refused).toBeInstanceOf(CorruptLogError);
        expect(flips.length).toBeGreaterThan(0);
      } else {
        expect(result.served).toEqual(servedInOrder.slice(0, result.served.length));
        // Without flips, only the write the cut tore is lost.
        if (flips.length === 0) expect(result.served).toHaveLength(wholeRecords);
      }
    }),
    { seed: 131313, numRuns: 150 },
  );
});

describe('a full disk and a read-only directory', () => {
  let disk: Awaited<ReturnType<typeof smallDisk>>;
  beforeEach(async () => {
    disk = await smallDisk(dir, 1024 * 1024);
    console.log(
      disk.kind === 'tmpfs'
        ? 'file log faults: a real 1 MiB tmpfs fills up and turns read-only'
        : 'file log faults: no tmpfs (not root, or mount refused): ENOSPC simulated at the fs layer (FileHandle.write), read-only by chmod 555',
    );
  });
  afterEach(() => disk.dispose());

  it('refuses appends it could not make durable with a retryable error, keeps every acknowledged one, and takes appends again once space is freed', async () => {
    const log = await FileEventLog.open({ dir });
    const acknowledged: number[] = [];
    for (let n = 0; n < 20; n++) acknowledged.push((await log.appendToStream('s', [{ type: 'T', data: { n, pad: 'p'.repeat(300) } }])).position);
    const sizeBefore = (await stat(join(dir, 'events.log'))).size;
    await disk.fill();
    // Appends racing the disk as it fills: some may fit in space already allocated, the rest fail.
    const results = await Promise.allSettled(
      Array.from({ length: 200 }, (_, n) => log.appendToStream(`c${n % 5}`, [{ type: 'T', data: { n: 100 + n, pad: 'q'.repeat(900) } }])),
    );
    const failures = results.filter((r) => r.status === 'rejected').map((r) => (r as PromiseRejectedResult).reason as Error);
    expect(failures.length).toBeGreaterThan(0);
    for (const failure of failures) expect(failure).toBeInstanceOf(LogWriteFailedError);
    expect(failures[0]!.message).toMatch(/ENOSPC/);
    const kept = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value.position] : []));
    acknowledged.push(...kept);
    // The file holds exactly the acknowledged records: the torn write was cut back.
    expect((await stat(join(dir, 'events.log'))).size).toBeGreaterThanOrEqual(sizeBefore);
    expect(await log.headPosition()).toBe(acknowledged.length);

    await disk.free();
    const after = await log.appendToStream('s', [{ type: 'T', data: { n: 'after' } }]);
    expect(after.position).toBe(acknowledged.length + 1);
    await log.close();

    const reopened = await FileEventLog.open({ dir, onTailRepaired: () => expect('no tail to repair').toBe('') });
    const events = await everyEvent(reopened);
    expect(events.map((e) => e.position)).toEqual([...acknowledged, after.position].sort((a, b) => a - b));
    // Revisions stay gapless per stream: the refused appends' revisions were given again.
    const revisions = events.filter((e) => e.stream === 's').map((e) => e.revision);
    expect(revisions).toEqual(revisions.map((_, i) => i));
    await reopened.close();
  });

  it('settles an append made from a refused append’s rejection on its own, without waiting for another append', async () => {
    const log = await FileEventLog.open({ dir });
    await log.appendToStream('s', [{ type: 'T', data: { n: 0 } }]);
    await disk.fill();
    // Retried at once from the rejection, as a caller retrying a retryable error does.
    let retry: Promise<string> | undefined;
    const filler = (n: number) => log.appendToStream('s', [{ type: 'T', data: { n, pad: 'f'.repeat(64 * 1024) } }]);
    for (let n = 1; n < 100 && !retry; n++) {
      await filler(n).catch(() => {
        retry = filler(1_000).then(
          () => 'settled',
          () => 'settled',
        );
      });
    }
    expect(retry).toBeDefined();
    const settled = await Promise.race([retry!, new Promise((resolve) => setTimeout(() => resolve('still waiting'), 2_000))]);
    expect(settled).toBe('settled');
    await disk.free();
    await log.close();
  });

  it('refuses to open a read-only directory with a message that names it and what to do', async () => {
    const log = await FileEventLog.open({ dir });
    await log.appendToStream('s', [{ type: 'T', data: { n: 1 } }]);
    await log.close();
    if (!disk.makeReadOnly()) {
      console.log('file log faults: read-only directory NOT CHECKED: running as root without a tmpfs, and root writes through file modes');
      return;
    }
    const refusal = await FileEventLog.open({ dir }).catch((error: Error) => error);
    expect(refusal).toBeInstanceOf(LogNotWritableError);
    expect((refusal as Error).message).toContain(dir);
    expect((refusal as Error).message).toMatch(/(EROFS|EACCES).*FEEDMILL_DATA_DIR/);
  });
});

it('writes nothing after a refused open: a damaged file stays as it was', async () => {
  await writeLog(5);
  await appendFile(join(dir, 'events.log'), Buffer.from([30, 0, 0, 0, 9, 9, 9, 9, ...Buffer.from('{"s":"x"}'.padEnd(30, ' '))]));
  const before = await readFile(join(dir, 'events.log'));
  await expect(FileEventLog.open({ dir })).rejects.toBeInstanceOf(CorruptLogError);
  expect((await readFile(join(dir, 'events.log'))).equals(before)).toBe(true);
});
