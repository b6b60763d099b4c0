import type { DeliverRequest } from '@feedmill/contracts';
import type { SnapshotState } from '@feedmill/stores';

/**
 * What the standalone's process holding the timelines and an HTTP worker holding a copy
 * of them say to each other over the worker's IPC channel (beside the services' calls,
 * which are arrays, and the realtime and metrics messages, tagged by their own key).
 *
 * - `join` (worker): send me the timelines, then every batch applied after them.
 * - `snapshot` (primary): the timelines as of `state.position`; the batches that follow
 *   start there. Sent again whenever the worker's copy must start over (a rebuild swapped
 *   the store, or a batch was applied other than as sent).
 * - `deliver` (primary): batches applied, in the order they were applied.
 * - `applied` (worker): its copy stands at `position`, so that a wait for a position (a
 *   follow's, an unfollow's) ends only once every copy has it.
 */
export type ReplicaMessage =
  | { replica: 'join' }
  | { replica: 'snapshot'; state: SnapshotState }
  | { replica: 'deliver'; requests: DeliverRequest[] }
  | { replica: 'applied'; position: number };

export function isReplicaMessage(message: unknown): message is ReplicaMessage {
  return typeof message === 'object' && message !== null && !Array.isArray(message) && 'replica' in message;
}
