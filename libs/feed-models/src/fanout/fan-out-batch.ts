import type { DeliverReply, DeliverRequest, PositionedEvent, TimelineDelivery } from '@feedmill/contracts';
import { chunkDeliveries, DELIVERY_BUDGET_BYTES } from './delivery-chunks.js';
import { planDeliveries, type PlanLookups } from './delivery-plan.js';
import type { FollowerIndex } from './follower-index.js';

/** Where deliveries are applied: the timeline service over a transport, or a timeline store in this process. */
export interface DeliveryTarget {
  deliver(request: DeliverRequest): Promise<DeliverReply>;
  /**
   * The rough size in bytes of the largest request the target takes well
   * ({@link chunkDeliveries}). @defaultValue {@link DELIVERY_BUDGET_BYTES}, under a NATS message
   */
  readonly requestBudgetBytes?: number;
}

/**
 * Applies chunks of deliveries in order to a target that stands at `from`, moving it to `to`
 * with the last chunk (with an empty one when there is nothing to deliver). Each chunk names
 * the position it expects, so a target that stands elsewhere refuses it: its reply is
 * returned for the caller to replay from where the target stands.
 */
export async function deliverInOrder(target: DeliveryTarget, chunks: readonly TimelineDelivery[][], from: number, to: number): Promise<DeliverReply> {
  const requests = chunks.length > 0 ? chunks : [[]];
  for (const [index, deliveries] of requests.entries()) {
    const reply = await target.deliver({ after: from, position: index === requests.length - 1 ? to : from, deliveries });
    if (!reply.applied) return reply;
  }
  return { applied: true, position: to };
}

/**
 * What fan-out does with a batch of the log, live or in a rebuild: plans its deliveries,
 * chunks them and applies them in order, moving the target from `from` to `to` (the batch's
 * last position, which may be past its last feed event). Once the target has them, the
 * follower index takes in the batch's follows and unfollows and stands at `to` as well.
 */
export async function fanOutBatch(
  events: readonly PositionedEvent[],
  followers: FollowerIndex,
  lookups: PlanLookups,
  target: DeliveryTarget,
  from: number,
  to: number,
): Promise<DeliverReply> {
  const reply = await deliverInOrder(target, chunkDeliveries(await planDeliveries(events, followers, lookups), target.requestBudgetBytes ?? DELIVERY_BUDGET_BYTES), from, to);
  if (reply.applied) followers.advance(events, to);
  return reply;
}
