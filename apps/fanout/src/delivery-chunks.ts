import { approximateBytes, type TimelineDelivery } from '@feedmill/contracts';

/** Readers per insert or remove delivery, and the rough byte budget of one request. */
export const MAX_READERS_PER_DELIVERY = 2_000;
export const DELIVERY_BUDGET_BYTES = 256 * 1024;

/**
 * Splits deliveries into requests that stay well under the transport's message limit
 * (1 MiB by default on NATS), keeping their order. A delivery to many readers is split by
 * readers; sizes are estimated from the activities' text, without serializing them.
 */
export function chunkDeliveries(deliveries: readonly TimelineDelivery[]): TimelineDelivery[][] {
  const chunks: TimelineDelivery[][] = [];
  let current: TimelineDelivery[] = [];
  let bytes = 0;
  const push = (delivery: TimelineDelivery, size: number) => {
    if (current.length > 0 && bytes + size > DELIVERY_BUDGET_BYTES) {
      chunks.push(current);
      current = [];
      bytes = 0;
    }
    current.push(delivery);
    bytes += size;
  };
  for (const delivery of deliveries) {
    if (delivery.kind === 'insert' || delivery.kind === 'remove' || delivery.kind === 'bump') {
      const payload = delivery.kind === 'remove' ? delivery.id.length : approximateBytes(delivery.activity);
      for (let start = 0; start < delivery.readers.length; start += MAX_READERS_PER_DELIVERY) {
        const readers = delivery.readers.slice(start, start + MAX_READERS_PER_DELIVERY);
        push({ ...delivery, readers }, payload + readers.length * 40);
      }
    } else if (delivery.kind === 'follow') {
      push(delivery, delivery.recent.reduce((sum, activity) => sum + approximateBytes(activity), 100));
    } else {
      push(delivery, 100);
    }
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}
