import { setImmediate as nextTurn } from 'node:timers/promises';
import type { SnapshotLogger, SnapshotStore } from './snapshot-store.js';
import type { SnapshotState, SnapshotSteps, Snapshottable } from './snapshottable.js';

/** How long a snapshot taken in steps runs before it lets other work run (requests wait at most about this long). */
const STEPS_SLICE_MS = 2;

export interface SnapshotSchedule {
  /** Write once this many events were applied since the last snapshot. @defaultValue 100,000 */
  everyEvents: number;
  /** Write once this long passed since the last snapshot, if anything was applied. @defaultValue 60 s */
  everyMs: number;
}

/** Told of each snapshot restored or written, for metrics. */
export interface SnapshotObserver {
  restored(state: string, position: number): void;
  written(state: string, position: number, seconds: number): void;
}

export const defaultSnapshotSchedule: SnapshotSchedule = { everyEvents: 100_000, everyMs: 60_000 };

interface Tracked {
  state: Snapshottable;
  /** Position of the last snapshot written or restored. */
  position: number;
  appliedAtLast: number;
  at: number;
  /** The erasure position its last write tried to cover. */
  erasureTried?: number;
  writing?: Promise<void>;
}

/**
 * Restores memory states from their newest good snapshot at start, and writes new ones
 * periodically and at shutdown. A state that can be taken in steps (see
 * `Snapshottable.snapshotSteps`) is serialized a slice of a few milliseconds at a time, one
 * state after another, with requests answered in between, its writes held until it is done;
 * another is taken in one turn. Each is written to disk asynchronously.
 */
export class SnapshotKeeper {
  private readonly tracked = new Map<string, Tracked>();
  /** The log position of the latest erasure: no snapshot before it may stay on disk. */
  private erasedAt = 0;
  private timer?: NodeJS.Timeout;
  private closed = false;
  /** The snapshot being taken: one state at a time, so that each holds its writes no longer than its own steps take. */
  private taking: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly store: SnapshotStore,
    private readonly logger: SnapshotLogger,
    private readonly schedule: SnapshotSchedule = defaultSnapshotSchedule,
    /** @defaultValue tells no one */
    private readonly observer?: SnapshotObserver,
  ) {}

  /**
   * Restores `state` from its newest good snapshot, then keeps it saved. Call it before the
   * state subscribes to the log. The state stays empty, to be rebuilt from the log, when the
   * newest snapshot covers more than the log holds (`headPosition`: the log was replaced, or
   * lost a tail; its snapshots are then deleted), or when the state refuses it (taken under another config, or it does not
   * hold together); either is logged. With `atMost`, snapshots past it are passed over: a
   * state that must not stand ahead of another restores one at or before the other's.
   */
  async restoreAndKeep(state: Snapshottable, headPosition: number, { atMost = Infinity }: { atMost?: number } = {}): Promise<void> {
    if (this.tracked.has(state.name)) throw new Error(`a snapshot state named ${state.name} is already kept`);
    const started = performance.now();
    const snapshot = await this.store.load(state.name, atMost);
    let position = 0;
    if (snapshot && snapshot.position > headPosition) {
      // They are of another log (this one was replaced, say from a backup): kept, the newest
      // would be restored at a later start, once this log has grown past it, over what it
      // holds by then. The state rebuilds from the log and writes its own.
      await this.store.deleteBefore(state.name, Number.POSITIVE_INFINITY);
      this.logger.warn(`skipped snapshot ${snapshot.file}: it covers position ${snapshot.position}, the log ends at ${headPosition}; deleted the snapshots of ${state.name}, which are of another log`);
    } else if (snapshot) {
      try {
        state.restoreSnapshot(snapshot);
        position = snapshot.position;
        this.observer?.restored(state.name, position);
        this.logger.log(`${state.name}: restored ${snapshot.file} (${snapshot.payload.length} bytes, position ${position}) in ${Math.round(performance.now() - started)} ms`);
      } catch (error) {
        this.logger.warn(`skipped snapshot ${snapshot.file}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
    this.tracked.set(state.name, { state, position, appliedAtLast: state.appliedEvents, at: Date.now() });
    this.startTimer();
  }

  /**
   * Keeps `state` saved in place of the state of its name kept so far (a rebuild took over),
   * and writes its first snapshot now.
   */
  async replace(state: Snapshottable): Promise<void> {
    const previous = this.tracked.get(state.name);
    await previous?.writing;
    const tracked: Tracked = { state, position: 0, appliedAtLast: Number.NaN, at: Date.now() };
    this.tracked.set(state.name, tracked);
    this.startTimer();
    await this.write(tracked);
  }

  /**
   * A feed was erased at `position`: every state writes a snapshot as soon as it has applied
   * the erasure, and then its snapshots from before are deleted (they hold what was erased).
   * Until a state has applied it, its periodic writes are taken each time it moves.
   */
  afterErasure(position: number): void {
    if (position <= this.erasedAt) return;
    this.erasedAt = position;
    void this.writeDue();
  }

  /** Writes the snapshots that are due (or every one that changed since its last, with `force`). */
  async writeDue(force = false): Promise<void> {
    // States taken in one turn go first: fan-out restores its follower index from a snapshot
    // no further on than the timelines' (which are taken in steps after it, at its position
    // or a later one), and the index never stands ahead of the timelines.
    const states = [...this.tracked.values()].sort((a, b) => Number(a.state.snapshotSteps !== undefined) - Number(b.state.snapshotSteps !== undefined));
    await Promise.all(states.map((t) => (this.isDue(t, force) || this.owesErasure(t) ? this.write(t) : t.writing)));
  }

  /** Whether the state's snapshots on disk still predate the last erasure, and it has moved since it last tried. */
  private owesErasure(t: Tracked): boolean {
    return t.position < this.erasedAt && (t.erasureTried !== this.erasedAt || t.state.appliedEvents !== t.appliedAtLast);
  }

  /** Stops the timer and writes a last snapshot of every state that changed. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    await Promise.all([...this.tracked.values()].map((t) => t.writing));
    await this.writeDue(true);
  }

  private isDue(t: Tracked, force: boolean): boolean {
    if (t.state.appliedEvents === t.appliedAtLast) return false;
    // A count that fell (a state rebuilt from the start) changed as much as one that rose.
    const applied = Math.abs(t.state.appliedEvents - t.appliedAtLast);
    return force || !(applied < this.schedule.everyEvents) || Date.now() - t.at >= this.schedule.everyMs;
  }

  private write(t: Tracked): Promise<void> {
    if (t.writing) return t.writing;
    const taken = this.taking.then(() => this.taken(t));
    this.taking = taken.catch(() => undefined);
    t.writing = taken
      .then(async ({ snapshot, took, erasedAt }) => {
        // Own events applied past the subscription's position change the state without moving
        // it: the position alone does not say whether anything changed, the applied count does.
        if (snapshot.position === 0) return;
        const started = performance.now();
        const file = await this.store.save(t.state.name, snapshot.position, snapshot.payload);
        t.position = snapshot.position;
        this.observer?.written(t.state.name, snapshot.position, (took.ms + performance.now() - started) / 1000);
        if (erasedAt > 0 && snapshot.position >= erasedAt) await this.store.deleteBefore(t.state.name, erasedAt);
        this.logger.log(`${t.state.name}: wrote ${file} (${snapshot.payload.length} bytes, position ${snapshot.position}): serialized in ${describeTook(took)}, on disk in ${Math.round(performance.now() - started)} ms`);
      })
      .catch((error) => this.logger.warn(`${t.state.name}: snapshot not written: ${String(error)}`))
      .finally(() => (t.writing = undefined));
    return t.writing;
  }

  /** The state's snapshot, taken in steps when it can be, and what taking it cost. */
  private async taken(t: Tracked): Promise<{ snapshot: SnapshotState; took: Took; erasedAt: number }> {
    const started = performance.now();
    const applied = t.state.appliedEvents;
    // The erasure this snapshot is to cover, if the state has applied it by now.
    const erasedAt = this.erasedAt;
    const stepped = t.state.snapshotSteps?.();
    const snapshot = stepped ? await inSlices(stepped) : { state: t.state.takeSnapshot(), slices: 1, longestMs: performance.now() - started };
    t.appliedAtLast = applied;
    t.at = Date.now();
    t.erasureTried = erasedAt;
    return { snapshot: snapshot.state, took: { ms: performance.now() - started, slices: snapshot.slices, longestMs: snapshot.longestMs }, erasedAt };
  }

  private startTimer(): void {
    if (this.timer || this.closed) return;
    const everyMs = Math.max(100, Math.min(1_000, this.schedule.everyMs));
    this.timer = setInterval(() => void this.writeDue(), everyMs);
    // Snapshots never keep a process alive.
    this.timer.unref();
  }
}

interface Took {
  ms: number;
  slices: number;
  longestMs: number;
}

function describeTook({ ms, slices, longestMs }: Took): string {
  return slices === 1 ? `${Math.round(ms)} ms` : `${Math.round(ms)} ms, ${slices} slices of at most ${Math.round(longestMs)} ms`;
}

/** Runs a snapshot's steps, letting other work run once a slice of them took {@link STEPS_SLICE_MS}. */
async function inSlices(steps: SnapshotSteps): Promise<{ state: SnapshotState; slices: number; longestMs: number }> {
  let slices = 1;
  let longestMs = 0;
  let sliceStarted = performance.now();
  for (;;) {
    const step = steps.next();
    const sliceMs = performance.now() - sliceStarted;
    if (step.done) return { state: step.value, slices, longestMs: Math.max(longestMs, sliceMs) };
    if (sliceMs < STEPS_SLICE_MS) continue;
    longestMs = Math.max(longestMs, sliceMs);
    await nextTurn();
    slices++;
    sliceStarted = performance.now();
  }
}
