import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SnapshotMismatchError } from './snapshot-file.js';
import { SnapshotKeeper } from './snapshot-keeper.js';
import { SnapshotStore } from './snapshot-store.js';
import type { SnapshotState, SnapshotSteps, Snapshottable } from './snapshottable.js';

/** A state that is its position: what it restores, it stands at. */
class Counter implements Snapshottable {
  position = 0;
  appliedEvents = 0;
  refuse?: string;

  constructor(readonly name = 'counter') {}

  apply(events: number): void {
    this.position += events;
    this.appliedEvents += events;
  }

  takeSnapshot(): SnapshotState {
    return { position: this.position, payload: Buffer.from(String(this.position)) };
  }

  restoreSnapshot(state: SnapshotState): void {
    if (this.refuse) throw new SnapshotMismatchError(this.refuse);
    expect(Buffer.from(state.payload).toString()).toBe(String(state.position));
    this.position = state.position;
  }
}

/** A counter whose snapshot takes five steps of 5 ms of work each. */
class SlowCounter extends Counter {
  *snapshotSteps(): SnapshotSteps {
    for (let step = 0; step < 5; step++) {
      const until = performance.now() + 5;
      while (performance.now() < until);
      yield;
    }
    return this.takeSnapshot();
  }
}

let dir: string;
let messages: string[];
const logger = { log: (m: string) => messages.push(`log ${m}`), warn: (m: string) => messages.push(`warn ${m}`) };
const keeper = (schedule = { everyEvents: 1_000_000, everyMs: 3_600_000 }) => new SnapshotKeeper(new SnapshotStore(dir, logger), logger, schedule);

beforeEach(async () => {
  dir = join(await mkdtemp(join(tmpdir(), 'feedmill-keeper-')), 'snapshots');
  messages = [];
});
afterEach(() => rm(join(dir, '..'), { recursive: true, force: true }));

async function written(...positions: number[]): Promise<void> {
  const store = new SnapshotStore(dir, logger);
  for (const position of positions) await store.save('counter', position, Buffer.from(String(position)));
}

describe('SnapshotKeeper', () => {
  it('restores the newest snapshot and says which, then writes one at close', async () => {
    await written(10, 20);
    const counter = new Counter();
    const kept = keeper();
    await kept.restoreAndKeep(counter, 25);
    expect(counter.position).toBe(20);
    expect(messages).toContainEqual(expect.stringMatching(/^log counter: restored counter\.0+20\.snapshot \(2 bytes, position 20\)/));
    counter.apply(3);
    await kept.close();
    expect((await readdir(dir)).sort()).toEqual(['counter.0000000000000020.snapshot', 'counter.0000000000000023.snapshot']);
  });

  it('restores nothing from a snapshot past the end of the log, says so, and deletes the snapshots of that other log', async () => {
    await written(10, 30);
    const counter = new Counter();
    await keeper().restoreAndKeep(counter, 25);
    expect(counter.position).toBe(0);
    expect(messages).toContainEqual(
      `warn skipped snapshot counter.0000000000000030.snapshot: it covers position 30, the log ends at 25; deleted the snapshots of counter, which are of another log`,
    );
    expect(await readdir(dir)).toEqual([]);
    // Once the log has grown past 30 without a snapshot of its own, a start replays it: nothing of the other log comes back.
    const later = new Counter();
    await keeper().restoreAndKeep(later, 40);
    expect(later.position).toBe(0);
  });

  it('restores nothing from a snapshot the state refuses, and says why', async () => {
    await written(10);
    const counter = new Counter();
    counter.refuse = 'it was taken under another feed config';
    await keeper().restoreAndKeep(counter, 25);
    expect(counter.position).toBe(0);
    expect(messages).toContainEqual('warn skipped snapshot counter.0000000000000010.snapshot: it was taken under another feed config');
  });

  it('passes over snapshots past `atMost` for the newest at or before it, and leaves them be', async () => {
    await written(10, 20, 30);
    const counter = new Counter();
    await keeper().restoreAndKeep(counter, 100, { atMost: 25 });
    expect(counter.position).toBe(20);
    expect(await readdir(dir)).toContain('counter.0000000000000030.snapshot');
  });

  it('writes a snapshot once enough events were applied since the last one', async () => {
    const counter = new Counter();
    const kept = keeper({ everyEvents: 100, everyMs: 3_600_000 });
    await kept.restoreAndKeep(counter, 0);
    counter.apply(99);
    await kept.writeDue();
    expect(await readdir(dir).catch(() => [])).toEqual([]);
    counter.apply(1);
    await kept.writeDue();
    expect(await readdir(dir)).toEqual(['counter.0000000000000100.snapshot']);
    await kept.close();
  });

  it('keeps a state that took over from another of its name, and writes it at once', async () => {
    const counter = new Counter();
    const kept = keeper();
    await kept.restoreAndKeep(counter, 0);
    counter.apply(50);
    const rebuilt = new Counter();
    rebuilt.apply(40);
    await kept.replace(rebuilt);
    expect(await readdir(dir)).toEqual(['counter.0000000000000040.snapshot']);
    counter.apply(10);
    rebuilt.apply(5);
    await kept.close();
    expect((await readdir(dir)).sort()).toEqual(['counter.0000000000000040.snapshot', 'counter.0000000000000045.snapshot']);
  });
  it('takes a snapshot that comes in steps a slice at a time, letting other work run between slices', async () => {
    const counter = new SlowCounter();
    const kept = keeper();
    await kept.restoreAndKeep(counter, 0);
    counter.apply(7);
    const turns: string[] = [];
    const ticking = setInterval(() => turns.push('other work'), 0);
    await kept.writeDue(true);
    clearInterval(ticking);
    // 25 ms of serialization in slices of about 5 ms: timers ran in between, not only after.
    expect(turns.length).toBeGreaterThanOrEqual(2);
    expect(messages).toContainEqual(expect.stringMatching(/^log counter: wrote .*counter\.0+7\.snapshot \(1 bytes, position 7\): serialized in \d+ ms, [2-6] slices of at most \d+ ms/));
    await kept.close();
  });
  it('takes the states taken in one turn before those taken in steps, whatever order they were kept in', async () => {
    const timelines = new SlowCounter('timelines');
    const followers = new Counter('followers');
    const kept = keeper();
    await kept.restoreAndKeep(timelines, 0);
    await kept.restoreAndKeep(followers, 0);
    timelines.apply(4);
    followers.apply(4);
    const taken: string[] = [];
    for (const state of [timelines, followers]) {
      const take = state.takeSnapshot.bind(state);
      state.takeSnapshot = () => (taken.push(state.name), take());
    }
    await kept.writeDue(true);
    expect(taken).toEqual(['followers', 'timelines']);
    await kept.close();
  });
});
