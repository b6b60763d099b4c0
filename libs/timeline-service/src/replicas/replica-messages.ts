import type { DeliverRequest, FeedId, TimelineDelivery } from '@feedmill/contracts';
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
 * - `deliver` (primary): batches applied, in the order they were applied (see {@link CopiedRequest}).
 * - `applied` (worker): its copy stands at `position`, so that a wait for a position (a
 *   follow's, an unfollow's) ends only once every copy has it.
 */
export type ReplicaMessage =
  | { replica: 'join' }
  | { replica: 'snapshot'; state: SnapshotState }
  | { replica: 'deliver'; requests: CopiedRequest[] }
  | { replica: 'applied'; position: number };

export function isReplicaMessage(message: unknown): message is ReplicaMessage {
  return typeof message === 'object' && message !== null && !Array.isArray(message) && 'replica' in message;
}

type Readers = TimelineDelivery extends infer D ? (D extends { readers: infer R } ? R : never) : never;

/**
 * A delivery as it travels to a copy. Fan-out hands every post of a feed the same frozen
 * list of its followers (or the same slices of it) until they change; such a list crosses
 * once (`keep`, remembered under a key) and later deliveries name it (`readersOf`). So a
 * post sends its activity, not its thousands of readers, and the copy hands its store the
 * same list object each time, which the store looks its timelines up for once.
 *
 * A list is kept under its feed and first reader: a slice of the followers keeps its key
 * while they change, so the lists kept are about as many as the slices fan-out makes.
 */
export type CopiedDelivery = TimelineDelivery | (Omit<Extract<TimelineDelivery, { kind: 'insert' }>, 'readers'> & { readersOf: string }) | (Extract<TimelineDelivery, { kind: 'insert' }> & { keep: string });

export type CopiedRequest = Omit<DeliverRequest, 'deliveries'> & { deliveries: CopiedDelivery[] };

/** The lists of readers one end has sent, or the other received, by their key. */
export type ReaderLists = Map<string, Readers>;

const keyOf = (feed: FeedId, readers: Readers) => `${feed} ${readers[0] ?? ''}`;

/** `request` as sent to a copy that holds the lists in `sent` (which this updates). */
export function toCopied(request: DeliverRequest, sent: ReaderLists): CopiedRequest {
  let deliveries: CopiedDelivery[] | undefined;
  for (let i = 0; i < request.deliveries.length; i++) {
    const delivery = request.deliveries[i]!;
    if (delivery.kind !== 'insert' || !Object.isFrozen(delivery.readers)) continue;
    deliveries ??= request.deliveries.slice();
    const key = keyOf(delivery.activity.feed, delivery.readers);
    if (sent.get(key) === delivery.readers) {
      const { readers: _readers, ...named } = delivery;
      deliveries[i] = { ...named, readersOf: key };
    } else {
      sent.set(key, delivery.readers);
      deliveries[i] = { ...delivery, keep: key };
    }
  }
  return deliveries ? { ...request, deliveries } : request;
}

/** A copied request as the store takes it, with the lists in `received` (which this updates). */
export function fromCopied(request: CopiedRequest, received: ReaderLists): DeliverRequest {
  const deliveries = request.deliveries.map((delivery): TimelineDelivery => {
    if ('readersOf' in delivery) {
      const readers = received.get(delivery.readersOf);
      if (!readers) throw new Error(`a delivery names a list of readers that never came (${delivery.readersOf})`);
      const { readersOf: _feed, ...insert } = delivery;
      return { ...insert, readers };
    }
    if (!('keep' in delivery)) return delivery;
    const { keep, ...insert } = delivery;
    const readers = Object.freeze(insert.readers);
    received.set(keep, readers);
    return { ...insert, readers };
  });
  return { ...request, deliveries };
}
