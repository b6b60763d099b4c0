import { NestFactory } from '@nestjs/core';
import { Transport, type MicroserviceOptions } from '@nestjs/microservices';
import { defaultFeedConfig, subjects, type DeliverRequest, type TimelineDelivery } from '@feedmill/contracts';
import type { RecordedEvent } from '@feedmill/event-log';
import { chunkDeliveries, planDeliveries, type PlanLookups } from '@feedmill/fanout';
import { InProcessServer, InProcessServiceClient, natsClient, rootModule, type ServiceClient } from '@feedmill/platform';
import { TimelineModule } from '@feedmill/timeline';
import { stubServiceClient } from '@feedmill/testing';
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
  events: readonly RecordedEvent[],
  lookups: PlanLookups,
  natsUrl: string | undefined,
  maxDeliveries: number,
): Promise<TransportFanoutResult> {
  const setup = events.filter((e) => e.type === 'FeedFollowed' || e.type === 'FeedUnfollowed');
  const posts: RecordedEvent[] = [];
  let planned = 0;
  for (const event of events) {
    if (event.type !== 'ActivityAdded' || planned >= maxDeliveries) continue;
    const feed = (event.data as { activity: { feed: string } }).activity.feed;
    planned += (await lookups.followers(feed as never, 0)).length;
    posts.push(event);
  }

  const run = async (deliver: (client: ServiceClient, batch: RecordedEvent[], position: { at: number }) => Promise<number>) => {
    const endpoint = await timelineEndpoint(natsUrl);
    const position = { at: 0 };
    try {
      for (let i = 0; i < setup.length; i += BATCH) await sendBatched(endpoint.client, setup.slice(i, i + BATCH), lookups, position);
      const started = performance.now();
      let requests = 0;
      for (let i = 0; i < posts.length; i += BATCH) requests += await deliver(endpoint.client, posts.slice(i, i + BATCH), position);
      return { requests, seconds: (performance.now() - started) / 1000 };
    } finally {
      await endpoint.close();
    }
  };

  const ours = await run((client, batch, position) => sendBatched(client, batch, lookups, position));
  const naive = await run(async (client, batch, position) => {
    let requests = 0;
    for (const delivery of await planDeliveries(batch, lookups)) {
      if (delivery.kind !== 'insert') continue;
      for (const reader of delivery.readers) {
        const one: TimelineDelivery = { kind: 'insert', readers: [reader], activity: delivery.activity };
        await deliver(client, { after: position.at, position: position.at, deliveries: [one] });
        requests++;
      }
    }
    return requests;
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

/** What the fan-out service does with a batch: plan, chunk, and send in order. */
async function sendBatched(client: ServiceClient, batch: RecordedEvent[], lookups: PlanLookups, position: { at: number }): Promise<number> {
  const last = batch[batch.length - 1]!.position;
  const chunks = chunkDeliveries(await planDeliveries(batch, lookups));
  if (chunks.length === 0) chunks.push([]);
  for (const [index, deliveries] of chunks.entries()) {
    await deliver(client, { after: position.at, position: index === chunks.length - 1 ? last : position.at, deliveries });
  }
  position.at = last;
  return chunks.length;
}

async function deliver(client: ServiceClient, request: DeliverRequest): Promise<void> {
  const reply = await client.request(subjects.timeline.deliver, request);
  if (!reply.applied) throw new Error(`timeline refused a delivery after ${request.after}: it stands at ${reply.position}`);
}
