import { NestFactory } from '@nestjs/core';
import { Transport, type MicroserviceOptions } from '@nestjs/microservices';
import { decodeFeedEvents, defaultFeedConfig, subjects, type PositionedEvent, type TimelineDelivery } from '@feedmill/contracts';
import type { RecordedEvent } from '@feedmill/event-log';
import { fanOutBatch, FollowerIndex, planDeliveries, type DeliveryTarget, type PlanLookups } from '@feedmill/feed-models';
import { rootModule } from '@feedmill/runtime';
import { InProcessServer, InProcessServiceClient, natsClient, serviceDeliveryTarget, type ServiceClient } from '@feedmill/transport';
import { TimelineModule } from '@feedmill/timeline-service';
import { stubServiceClient } from '@feedmill/harness';
import { round } from './deployment.js';

const BATCH = 512;

export interface TransportFanoutResult {
  transport: string;
  posts: number;
  deliveries: number;
  ours: { requests: number; seconds: number; deliveriesPerSecond: number };
  naive: { requests: number; seconds: number; deliveriesPerSecond: number };
  speedup: number;
}

/** A timeline service of its own, reached the way the deployment reaches it. */
async function timelineEndpoint(natsUrl: string | undefined): Promise<{ client: ServiceClient; close(): Promise<void> }> {
  // Only deliveries are measured: the timeline's reads, which ask graph and content, find nothing.
  const nothing = { items: [], next: null };
  const core = { feedConfig: defaultFeedConfig, client: stubServiceClient({ [subjects.graph.following]: () => nothing, [subjects.content.recent]: () => nothing }) };
  if (natsUrl === undefined) {
    const server = new InProcessServer();
    const app = await NestFactory.createMicroservice(rootModule([TimelineModule], core), { strategy: server, logger: ['error'] });
    // As the standalone does: its services are called directly.
    server.callControllersOf(app);
    await app.listen();
    return { client: new InProcessServiceClient(server), close: () => app.close() };
  }
  const app = await NestFactory.createMicroservice<MicroserviceOptions>(rootModule([TimelineModule], core), {
    transport: Transport.NATS,
    options: { servers: [natsUrl] },
    logger: ['error'],
  });
  await app.listen();
  const client = natsClient(natsUrl);
  return { client, close: async () => (await client.close(), await app.close()) };
}

/**
 * Fan-out through a real service boundary, ours against the naive version: ours sends
 * each batch of events as a few delivery requests; the naive version sends one awaited
 * request per follower of each post. Both start from a timeline that has the same follows
 * (untimed), then deliver the same posts (timed): the first posts of the log, until about
 * `maxDeliveries` entries, so that the naive run stays short.
 */
export async function measureTransportFanout(
  records: readonly RecordedEvent[],
  lookups: PlanLookups,
  natsUrl: string | undefined,
  maxDeliveries: number,
): Promise<TransportFanoutResult> {
  const events = decodeFeedEvents(records);
  const setup = events.filter(({ event }) => event.type === 'FeedFollowed' || event.type === 'FeedUnfollowed');
  // Every post goes to the followers the whole log leaves, as the setup leaves the timeline.
  const followers = new FollowerIndex();
  followers.advance(setup, events[events.length - 1]?.position ?? 0);
  const posts: PositionedEvent[] = [];
  let planned = 0;
  for (const positioned of events) {
    if (positioned.event.type !== 'ActivityAdded' || planned >= maxDeliveries) continue;
    planned += followers.followersOf(positioned.event.data.activity.feed).length;
    posts.push(positioned);
  }

  const run = async (deliver: (timeline: DeliveryTarget, batch: PositionedEvent[], position: { at: number }) => Promise<void>) => {
    const endpoint = await timelineEndpoint(natsUrl);
    const timeline = countingRequests(serviceDeliveryTarget(endpoint.client));
    const position = { at: 0 };
    try {
      for (let i = 0; i < setup.length; i += BATCH) await sendBatched(timeline, setup.slice(i, i + BATCH), followers, lookups, position);
      const started = performance.now();
      timeline.requests = 0;
      for (let i = 0; i < posts.length; i += BATCH) await deliver(timeline, posts.slice(i, i + BATCH), position);
      return { requests: timeline.requests, seconds: (performance.now() - started) / 1000 };
    } finally {
      await endpoint.close();
    }
  };

  const ours = await run((timeline, batch, position) => sendBatched(timeline, batch, followers, lookups, position));
  const naive = await run(async (timeline, batch, position) => {
    for (const delivery of await planDeliveries(batch, followers, lookups)) {
      if (delivery.kind !== 'insert') continue;
      for (const reader of delivery.readers) {
        const one: TimelineDelivery = { kind: 'insert', readers: [reader], activity: delivery.activity };
        expectApplied(await timeline.deliver({ after: position.at, position: position.at, deliveries: [one] }), position.at);
      }
    }
  });
  const rate = (seconds: number) => Math.round(planned / seconds);
  return {
    transport: natsUrl === undefined ? 'in-process (standalone)' : 'NATS (cluster)',
    posts: posts.length,
    deliveries: planned,
    ours: { requests: ours.requests, seconds: round(ours.seconds, 3), deliveriesPerSecond: rate(ours.seconds) },
    naive: { requests: naive.requests, seconds: round(naive.seconds, 3), deliveriesPerSecond: rate(naive.seconds) },
    speedup: round(naive.seconds / ours.seconds, 1),
  };
}

/** A delivery target that counts the requests sent through it. */
function countingRequests(target: DeliveryTarget): DeliveryTarget & { requests: number } {
  const counting = {
    requests: 0,
    deliver: (request: Parameters<DeliveryTarget['deliver']>[0]) => {
      counting.requests++;
      return target.deliver(request);
    },
  };
  return counting;
}

/** What the fan-out service does with a batch: plan, chunk, and send in order. */
async function sendBatched(timeline: DeliveryTarget, batch: PositionedEvent[], followers: FollowerIndex, lookups: PlanLookups, position: { at: number }): Promise<void> {
  const last = batch[batch.length - 1]!.position;
  expectApplied(await fanOutBatch(batch, followers, lookups, timeline, position.at, last), position.at);
  position.at = last;
}

function expectApplied(reply: { applied: boolean; position: number }, after: number): void {
  if (!reply.applied) throw new Error(`timeline refused a delivery after ${after}: it stands at ${reply.position}`);
}
