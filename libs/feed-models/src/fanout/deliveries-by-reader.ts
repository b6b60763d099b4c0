import type { FeedId, TimelineDelivery } from '@feedmill/contracts';

/**
 * A request's deliveries reader by reader, each reader's in the order the request gives
 * them, readers in the order they first appear. A delivery to many readers becomes one per
 * reader, the same change. Applying every reader's deliveries changes the timelines as the
 * whole request does: no delivery reads or writes another reader's timeline.
 */
export function deliveriesByReader(deliveries: readonly TimelineDelivery[]): Map<FeedId, TimelineDelivery[]> {
  const byReader = new Map<FeedId, TimelineDelivery[]>();
  const add = (reader: FeedId, delivery: TimelineDelivery) => {
    const own = byReader.get(reader);
    if (own) own.push(delivery);
    else byReader.set(reader, [delivery]);
  };
  for (const delivery of deliveries) {
    if ('readers' in delivery) for (const reader of delivery.readers) add(reader, { ...delivery, readers: [reader] });
    else add(delivery.reader, delivery);
  }
  return byReader;
}
