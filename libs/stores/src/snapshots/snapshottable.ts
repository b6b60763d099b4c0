/** A state as of one log position, serialized. */
export interface SnapshotState {
  /** Every event up to this log position is in the state; a restored state replays from after it. */
  position: number;
  payload: Uint8Array;
}

/**
 * A memory state rebuilt from the log that can be saved and restored instead of rebuilt.
 *
 * To join the {@link SnapshotKeeper}, a state implements this and is restored *before* it
 * subscribes to the log, so that its subscription starts after the restored position.
 */
export interface Snapshottable {
  /** Names the files (`[a-z][a-z0-9-]*`); unique among the states of one process. */
  readonly name: string;
  /**
   * A count of the events applied that changes whenever the state does (a position will
   * do): the keeper writes a snapshot once it moved by enough since the last one.
   */
  readonly appliedEvents: number;
  /**
   * The whole state, its idempotency data (stream revisions) and its position, taken
   * synchronously, in one turn of the event loop, so that no event is half in it.
   */
  takeSnapshot(): SnapshotState;
  /**
   * The same snapshot in steps, for a state large enough that serializing it in one turn
   * would hold up every request for hundreds of milliseconds: between two steps (each
   * `yield`) the keeper lets other work run. From the first step to the last the state
   * applies nothing (its writers wait, see {@link WritesHeld}), so that the snapshot is still
   * of one position. Without it, the keeper takes {@link takeSnapshot} in one turn.
   */
  snapshotSteps?(): SnapshotSteps;
  /**
   * Replaces an empty state with a snapshot's; called before the state applies any event.
   * Throws, leaving the state empty, for a payload that does not fit it.
   */
  restoreSnapshot(state: SnapshotState): void;
}

/** Rows (feeds, timelines) a snapshot's loop goes through between two steps: about a millisecond's work. */
export const ROWS_PER_STEP = 2_000;

/** A snapshot taken in steps: see {@link Snapshottable.snapshotSteps}. */
export type SnapshotSteps = Generator<void, SnapshotState, void>;

/** Runs a snapshot's steps one after another, in this turn. */
export function allSteps(steps: SnapshotSteps): SnapshotState {
  for (;;) {
    const step = steps.next();
    if (step.done) return step.value;
  }
}

/**
 * Holds a state's writes while a snapshot of it is taken in steps: each write waits until
 * the snapshot is done. Reads go on.
 */
export class WritesHeld {
  private held: Promise<void> | undefined;
  private release: (() => void) | undefined;
  /** Snapshots under way (the keeper's and a copy's may overlap): writes go on once the last ends. */
  private holders = 0;

  /** Whether a write must wait ({@link cleared}): checked first, so that a write nothing holds does not wait a turn. */
  get now(): boolean {
    return this.held !== undefined;
  }

  hold(): void {
    if (this.holders++ > 0) return;
    this.held = new Promise((resolve) => (this.release = resolve));
  }

  end(): void {
    if (this.holders === 0 || --this.holders > 0) return;
    const release = this.release;
    this.held = this.release = undefined;
    release?.();
  }

  /** Resolves once no snapshot holds the writes (a write let through may meet the next one). */
  async cleared(): Promise<void> {
    while (this.held) await this.held;
  }
}
