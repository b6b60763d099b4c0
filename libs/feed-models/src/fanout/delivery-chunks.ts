import { approximateBytes, type TimelineDelivery } from '@feedmill/contracts';

/** Readers per delivery of one change (insert, remove, bump, update), and the rough byte budget of one request. */
export const MAX_READERS_PER_DELIVERY = 2_000;
export const DELIVERY_BUDGET_BYTES = 256 * 1024;
/**
 * The budget of a request handed over in-process, as objects: nothing limits its size but
 * the event-loop turn it is applied in, and a catch-up's large requests let the timeline
 * store apply their posts reader by reader.
 */
export const IN_PROCESS_DELIVERY_BUDGET_BYTES = 16 * 1024 * 1024;

/**
 * Splits deliveries into requests that stay well under the transport's message limit
 * (1 MiB by default on NATS), keeping their order. A delivery to many readers is split by
 * readers; sizes are estimated from the activities' text, without serializing them.
 */
export function chunkDeliveries(deliveries: readonly TimelineDelivery[], budgetBytes = DELIVERY_BUDGET_BYTES): TimelineDelivery[][] {
  const chunks: TimelineDelivery[][] = [];
  let current: TimelineDelivery[] = [];
  let bytes = 0;
  const push = (delivery: TimelineDelivery, size: number) => {
    if (current.length > 0 && bytes + size > budgetBytes) {
      chunks.push(current);
      current = [];
      bytes = 0;
    }
    current.push(delivery);
    bytes += size;
  };
  for (let index = 0; index < deliveries.length; index++) {
    const delivery = deliveries[index]!;
    if (delivery.kind === 'insert' || delivery.kind === 'remove' || delivery.kind === 'bump' || delivery.kind === 'update') {
      const payload = delivery.kind === 'remove' ? delivery.id.length : approximateBytes(delivery.activity);
      // Most deliveries fit whole: not copied, since a catch-up sends millions.
      if (delivery.readers.length <= MAX_READERS_PER_DELIVERY) {
        push(delivery, payload + delivery.readers.length * 40);
        continue;
      }
      for (const readers of readerSlicesOf(delivery.readers)) push({ ...delivery, readers }, payload + readers.length * 40);
    } else if (delivery.kind === 'follow' && delivery.recent.length > 0) {
      for (const { piece, bytes } of splitFollow(delivery, budgetBytes)) push(piece, bytes);
    } else {
      // An unfollow, or a follow with nothing to backfill (most of an import's).
      push(delivery, 100);
    }
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}

/**
 * The slices of a frozen list of readers, kept with it: a feed's followers are one frozen list
 * until they change (`FollowerIndex.followersOf`), so each of its posts goes out in the same
 * slices, and the timeline store looks each slice's timelines up once (`MemoryTimelineStore`).
 */
const keptSlices = new WeakMap<readonly string[], ReadonlyArray<readonly string[]>>();

function readerSlicesOf<Reader extends string>(readers: readonly Reader[]): ReadonlyArray<readonly Reader[]> {
  const kept = keptSlices.get(readers) as ReadonlyArray<readonly Reader[]> | undefined;
  if (kept) return kept;
  const slices: Array<readonly Reader[]> = [];
  for (let start = 0; start < readers.length; start += MAX_READERS_PER_DELIVERY) slices.push(Object.freeze(readers.slice(start, start + MAX_READERS_PER_DELIVERY)));
  if (Object.isFrozen(readers)) keptSlices.set(readers, slices);
  return slices;
}

type FollowDelivery = Extract<TimelineDelivery, { kind: 'follow' }>;

/**
 * A follow's backfill (up to cap + 1 activities of any size) as pieces of at most the byte
 * budget, oldest first: the oldest piece carries `exhausted` and so sets the reader's floor,
 * and every newer piece lands above it. A bounded follow's `since` goes with the oldest piece
 * alone: a timeline forgets the feed's entries before it stores a piece that carries one, and
 * would forget the pieces before. Applied in that order they store what the whole delivery
 * would.
 */
function splitFollow(delivery: FollowDelivery, budgetBytes: number): Array<{ piece: FollowDelivery; bytes: number }> {
  const sizes = delivery.recent.map(approximateBytes);
  const { since: _since, ...unbounded } = delivery;
  const pieces: Array<{ piece: FollowDelivery; bytes: number }> = [];
  let end = delivery.recent.length;
  while (end > 0) {
    let start = end - 1;
    let bytes = 100 + sizes[start]!;
    while (start > 0 && bytes + sizes[start - 1]! <= budgetBytes) bytes += sizes[--start]!;
    const recent = delivery.recent.slice(start, end);
    pieces.push({ piece: pieces.length === 0 ? { ...delivery, recent } : { ...unbounded, recent, exhausted: true }, bytes });
    end = start;
  }
  return pieces;
}
