import type { DeliverRequest, FeedConfig, FeedId, TimelineDelivery } from '@feedmill/contracts';
import type { SnapshotState } from '@feedmill/stores';

/**
 * What the standalone's process holding the timelines and an HTTP worker holding a copy
 * of them say to each other over the worker's IPC channel (beside the services' calls,
 * which are arrays, and the realtime and metrics messages, tagged by their own key).
 *
 * - `join` (worker): send me the timelines, then every batch applied after them.
 * - `snapshot` (primary): the timelines as of `state.position`, under the feed config they
 *   were built with; the batches that follow start there. Sent again whenever the worker's
 *   copy must start over (a rebuild swapped the store, a batch was applied other than as
 *   sent); each is numbered (`epoch`).
 * - `deliver` (primary): batches applied, in the order they were applied (see {@link CopiedRequest}).
 * - `applied` (worker): its copy of snapshot `epoch` stands at `position`, so that a wait for
 *   a position (a follow's, an unfollow's) ends only once every copy has it. One about an
 *   earlier snapshot, sent before the worker took the new one, is not taken for the new one.
 */
export type ReplicaMessage =
  | { replica: 'join' }
  | { replica: 'snapshot'; state: SnapshotState; config: FeedConfig; epoch: number }
  | { replica: 'deliver'; requests: CopiedRequest[] }
  | { replica: 'applied'; position: number; epoch: number };

export function isReplicaMessage(message: unknown): message is ReplicaMessage {
  return typeof message === 'object' && message !== null && !Array.isArray(message) && 'replica' in message;
}

type InsertDelivery = Extract<TimelineDelivery, { kind: 'insert' }>;
type Readers = InsertDelivery['readers'];

/**
 * A delivery as it travels to a copy. Fan-out hands every post of a feed the same frozen
 * list of its followers (or the same slices of it) until they change; such a list crosses
 * once (`keep`, remembered under a key) and later deliveries name it (`readersOf`). So a
 * post sends its activity, not its thousands of readers, and the copy hands its store the
 * same list object each time, which the store looks its timelines up for once.
 *
 * A list is kept under its feed and first reader, so that a slice of the followers keeps its
 * key while they change, and each end keeps at most {@link MOST_LISTS_KEPT} of them (see
 * {@link ReaderLists}).
 */
export type CopiedDelivery = TimelineDelivery | (Omit<InsertDelivery, 'readers'> & { readersOf: string }) | (InsertDelivery & { keep: string });

export type CopiedRequest = Omit<DeliverRequest, 'deliveries'> & { deliveries: CopiedDelivery[] };

/** Lists of readers each end keeps: a list dropped is sent whole again when next delivered to. */
export const MOST_LISTS_KEPT = 10_000;

/**
 * The lists of readers one end has sent, or the other received, by their key, at most
 * `limit` of them, the least recently used dropped first. Both ends make the same calls in
 * the same order ({@link toCopied}, {@link fromCopied}), so they keep the same lists
 * without saying which they dropped.
 */
export class ReaderLists {
  private readonly lists = new Map<string, Readers>();

  constructor(private readonly limit = MOST_LISTS_KEPT) {}

  get size(): number {
    return this.lists.size;
  }

  /** The list kept under `key`, now the most recently used; undefined when none is. */
  use(key: string): Readers | undefined {
    const list = this.lists.get(key);
    if (list !== undefined) {
      this.lists.delete(key);
      this.lists.set(key, list);
    }
    return list;
  }

  keep(key: string, list: Readers): void {
    this.lists.delete(key);
    this.lists.set(key, list);
    if (this.lists.size > this.limit) this.lists.delete(this.lists.keys().next().value!);
  }
}

const keyOf = (feed: FeedId, readers: Readers) => `${feed} ${readers[0] ?? ''}`;

/** `request` as sent to a copy that holds the lists in `sent` (which this updates). */
export function toCopied(request: DeliverRequest, sent: ReaderLists): CopiedRequest {
  let deliveries: CopiedDelivery[] | undefined;
  for (let i = 0; i < request.deliveries.length; i++) {
    const delivery = request.deliveries[i]!;
    if (delivery.kind !== 'insert' || !Object.isFrozen(delivery.readers)) continue;
    deliveries ??= request.deliveries.slice();
    const key = keyOf(delivery.activity.feed, delivery.readers);
    if (sent.use(key) === delivery.readers) {
      const { readers: _readers, ...named } = delivery;
      deliveries[i] = { ...named, readersOf: key };
    } else {
      sent.keep(key, delivery.readers);
      deliveries[i] = { ...delivery, keep: key };
    }
  }
  return deliveries ? { ...request, deliveries } : request;
}

/** A copied request as the store takes it, with the lists in `received` (which this updates). */
export function fromCopied(request: CopiedRequest, received: ReaderLists): DeliverRequest {
  const deliveries = request.deliveries.map((delivery): TimelineDelivery => {
    if ('readersOf' in delivery) {
      const readers = received.use(delivery.readersOf);
      if (!readers) throw new Error(`a delivery names a list of readers that never came (${delivery.readersOf})`);
      const { readersOf: _feed, ...insert } = delivery;
      return { ...insert, readers };
    }
    if (!('keep' in delivery)) return delivery;
    const { keep, ...insert } = delivery;
    const readers = Object.freeze(insert.readers);
    // As the sender did: a look first (which found none, or another list), then the keep.
    received.use(keep);
    received.keep(keep, readers);
    return { ...insert, readers };
  });
  return { ...request, deliveries };
}
