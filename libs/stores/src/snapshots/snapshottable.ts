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
   * Replaces an empty state with a snapshot's; called before the state applies any event.
   * Throws, leaving the state empty, for a payload that does not fit it.
   */
  restoreSnapshot(state: SnapshotState): void;
}
