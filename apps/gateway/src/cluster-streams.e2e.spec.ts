import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FeedId } from '@feedmill/contracts';
import type { FeedStream, FeedStreamEvent } from '@feedmill/client';
import { FeedClient, nextStreamEvent, startApp, startCluster, startNatsServer, waitFor, waitUntilReady, type Deployment, type NatsServerHandle } from '@feedmill/harness';

/**
 * A stream held by the cluster's gateway across a restart of the timeline process that
 * publishes its events: the new process learns of the stream from the gateway's renewal and
 * announces its new ring with a `reset`, which the gateway passes on; the client goes on
 * receiving changes on the same connection.
 */
const STREAM = 'E2ESTREAMS';

const nextEvent = (stream: FeedStream): Promise<FeedStreamEvent> => nextStreamEvent(stream, 15_000);

let nats: NatsServerHandle;
let cluster: Deployment | undefined;
let configDir: string;
beforeAll(async () => {
  nats = await startNatsServer();
  configDir = await mkdtemp(join(tmpdir(), 'feedmill-cluster-streams-'));
});
afterAll(async () => {
  await cluster?.stop();
  await nats?.stop();
  await rm(configDir, { recursive: true, force: true });
});

it('keeps a stream through a restart of the timeline process: the new ring’s reset, then changes again', async () => {
  const config = join(configDir, 'feeds.json');
  await writeFile(config, JSON.stringify({ groups: { user: { kind: 'producer' }, timeline: { kind: 'timeline', model: 'ring', cap: 100 } } }));
  const env = { FEED_CONFIG: config, REALTIME_LEASE_SECONDS: '0.6' };
  cluster = await startCluster({ natsUrl: nats.url, stream: STREAM, env });
  const api = new FeedClient(cluster.baseUrl);
  const streamCounters = async () => {
    const { services } = await api.api.readiness();
    return services.find((service) => service.service === 'timeline')?.counters;
  };
  await api.follow('timeline:alice', 'user:bob');
  const stream = api.api.stream('timeline:alice' as FeedId);
  try {
    expect(await nextEvent(stream)).toMatchObject({ type: 'reset', data: { items: [] } });
    const first = (await api.post('user:bob', { actor: 'bob', verb: 'post', object: 'first' })).body;
    expect(await nextEvent(stream)).toMatchObject({ type: 'added', data: { activity: first } });
    const epoch = stream.lastEventId!.replace(/-\d+$/, '');

    const index = cluster.processes.findIndex((process) => process.name === 'timeline');
    await cluster.processes[index]!.kill();
    cluster.processes[index] = startApp('timeline', { NATS_URL: nats.url, LOG: 'jetstream', JETSTREAM_STREAM: STREAM, TIMELINE_PARTITIONS: '1', TIMELINE_REPLICAS: '1', ...env });
    await waitUntilReady(cluster.baseUrl, cluster.processes);
    // The gateway's renewal tells the new process that a stream is open on alice's timeline.
    await waitFor(async () => ((await streamCounters())?.['streamFeedsOpen'] === 1 ? true : undefined), { what: 'the renewed watch', timeoutMs: 15_000 });

    const second = (await api.post('user:bob', { actor: 'bob', verb: 'post', object: 'second' })).body;
    // The new process announces its ring with a reset of the page as it read it (while fan-out
    // may still be bringing its timelines up); the changes after it lead to the page as it is.
    let page: string[] | undefined;
    const epochs = new Set<string>();
    /** Follows the stream's events into `page` until it shows `expected`. */
    const followUntil = async (expected: string[]) => {
      while (JSON.stringify(page) !== JSON.stringify(expected)) {
        const event = await nextEvent(stream);
        epochs.add(event.id.replace(/-\d+$/, ''));
        if (event.type === 'reset') page = 'items' in event.data ? event.data.items.map((item) => item.id) : undefined;
        else if (page === undefined) throw new Error(`a ${event.type} event before the new ring's reset`);
        else if (event.type === 'added') page = [event.data.activity.id, ...page.filter((id) => id !== event.data.activity.id)];
        else if (event.type === 'removed') page = page.filter((id) => id !== event.data.id);
      }
    };
    await followUntil([second.id, first.id]);
    // A post after it reaches the stream on the same connection, in the new ring; changes still
    // on their way from the timelines' catch-up may come before it, and lead to the same page.
    const third = (await api.post('user:bob', { actor: 'bob', verb: 'post', object: 'third' })).body;
    await followUntil([third.id, second.id, first.id]);
    expect(epochs.has(epoch)).toBe(false);
    expect(epochs.size).toBe(1);
    expect(stream.connections).toBe(1);
  } finally {
    stream.close();
  }
});
