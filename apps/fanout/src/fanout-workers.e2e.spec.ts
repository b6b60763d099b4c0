import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DiscardPolicy, jetstream, jetstreamManager, type JsMsg } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { inspectFanoutCluster, type FanoutClusterView } from '@feedmill/fanout-cluster';
import { FeedClient, startApp, startCluster, startNatsServer, waitFor, waitUntilSettled, type Deployment, type NatsServerHandle, type RunningProcess } from '@feedmill/harness';

/**
 * Three fan-out processes share posts to 50,000 followers as chunk jobs (25 of 2,000 readers). One is killed
 * with SIGKILL while jobs of a post are in progress: a worker holding a job (which goes to
 * another once its lease runs out), and then the planner (another takes the lease, starts
 * from where timeline stands, and publishes the post's jobs again). Every follower ends with
 * every post exactly once: with timelines in one partition, and in four shared by two
 * timeline processes (jobs per partition, each fenced at its partition's position).
 */
const FOLLOWERS = 50_000;

let nats: NatsServerHandle;
let cluster: Deployment | undefined;
let view: FanoutClusterView | undefined;
let configDir: string;
let env: Record<string, string>;
beforeAll(async () => {
  nats = await startNatsServer();
  configDir = await mkdtemp(join(tmpdir(), 'feedmill-fanout-workers-'));
  // Ring timelines store every delivery, whether or not the reader has read.
  await writeFile(join(configDir, 'feeds.json'), JSON.stringify({ groups: { user: { kind: 'producer' }, timeline: { kind: 'timeline', model: 'ring', cap: 10 } } }));
  // Short leases, so that the test waits little for a dead process's work.
  env = { FEED_CONFIG: join(configDir, 'feeds.json'), FANOUT_JOB_LEASE_MS: '1500', FANOUT_PLANNER_LEASE_MS: '1500' };
});
afterEach(async () => {
  await view?.close();
  await cluster?.stop();
  view = undefined;
  cluster = undefined;
});
afterAll(async () => {
  await nats?.stop();
  await rm(configDir, { recursive: true, force: true });
});

const timelineCounters = (api: FeedClient) => api.counters('timeline');

const fanouts = () => cluster!.processes.filter((p) => p.name.startsWith('fanout'));
const alive = (p: RunningProcess) => p.child.exitCode === null && p.child.signalCode === null;

/** Posts once and kills `victim` as soon as every fan-out process holds a job of the post. */
async function postAndKillMidway(api: FeedClient, object: string, victim: RunningProcess): Promise<void> {
  await waitFor(async () => ((await view!.jobs()).waitingWorkers === 3 ? true : undefined), { timeoutMs: 30_000, what: 'three fan-out processes waiting for jobs' });
  expect((await api.post('user:star', { actor: 'star', verb: 'post', object })).status).toBe(201);
  // Each process holds one job at most: three in progress means the victim holds one.
  await waitFor(async () => ((await view!.jobs()).inProgress === 3 ? true : undefined), { timeoutMs: 30_000, intervalMs: 2, what: 'three jobs in progress' });
  await victim.kill();
}

/** Every follower's timeline, read over HTTP for a sample of them: the posts, newest first, each once. */
async function expectSampleHolds(api: FeedClient, objects: string[]): Promise<void> {
  const sample = Array.from({ length: 300 }, (_, i) => Math.floor((i * FOLLOWERS) / 300) + (i % 7));
  for (const n of sample) {
    const items = await api.readAll(`timeline:f${n}`);
    expect({ reader: n, objects: items.map((a) => a.object) }).toEqual({ reader: n, objects });
  }
}

it.each([
  { timelines: 'timelines in one partition', partitions: 1, replicas: 1, stream: 'FANOUTWORKERS' },
  { timelines: 'timelines in four partitions on two processes', partitions: 4, replicas: 2, stream: 'FANOUTWORKERSPARTITIONS' },
])('delivers a post to each of 50,000 followers exactly once though a worker, and then the planner, dies mid-fan-out ($timelines)', async ({ partitions, replicas, stream }) => {
  cluster = await startCluster({ natsUrl: nats.url, stream, env, fanoutWorkers: 3, timelinePartitions: partitions, timelineReplicas: replicas });
  view = await inspectFanoutCluster({ servers: nats.url, logStream: stream });
  const api = new FeedClient(cluster.baseUrl);
  for (let start = 0; start < FOLLOWERS; start += 10_000) {
    const follows = Array.from({ length: 10_000 }, (_, i) => ({ source: `timeline:f${start + i}` as const, target: 'user:star' as const }));
    expect(await api.api.followMany(follows)).toBe(follows.length);
  }
  await waitUntilSettled(api, 60_000);
  const planner = await view.planner();
  expect(fanouts().map((p) => p.child.pid)).toContain(planner!.pid);

  // A worker (not the planner) dies holding a job.
  const worker = fanouts().find((p) => p.child.pid !== planner!.pid)!;
  await postAndKillMidway(api, 'first', worker);
  await waitUntilSettled(api, 30_000);
  expect(await timelineCounters(api)).toMatchObject({ timelines: FOLLOWERS, delivered: FOLLOWERS, entries: FOLLOWERS });
  // Its job went to another process once its lease ran out.
  expect(fanouts().filter(alive).map((p) => p.output()).join('\n')).toMatch(/handed out again \(attempt 2\)/);
  expect((await view.planner())!.pid).toBe(planner!.pid);

  // Three again, then the planner dies while the next post's jobs are in progress.
  // The deployment stops what its list holds: the new process takes the old one's place.
  const clusterEnv = { ...env, NATS_URL: nats.url, LOG: 'jetstream', JETSTREAM_STREAM: stream, TIMELINE_PARTITIONS: String(partitions), TIMELINE_REPLICAS: String(replicas) };
  cluster.processes[cluster.processes.indexOf(worker)] = startApp('fanout', clusterEnv, worker.name);
  await postAndKillMidway(api, 'second', fanouts().find((p) => p.child.pid === planner!.pid)!);
  const successor = await waitFor(async () => {
    const now = await view!.planner();
    return now && now.pid !== planner!.pid ? now : undefined;
  }, { timeoutMs: 30_000, what: 'another planner' });
  expect(fanouts().filter(alive).map((p) => p.child.pid)).toContain(successor.pid);
  await waitUntilSettled(api, 30_000);
  expect(await timelineCounters(api)).toMatchObject({ timelines: FOLLOWERS, delivered: 2 * FOLLOWERS, entries: 2 * FOLLOWERS });
  expect((await view.jobs()).pending + (await view.jobs()).inProgress).toBe(0);

  await expectSampleHolds(api, ['second', 'first']);
});

/**
 * A cluster with one fan-out process beside the planner's own worker, on `stream`, where
 * `followers` timelines (`timeline:<prefix>0` on) follow `user:star`, settled.
 */
async function clusterWithFollowers(stream: string, more: Record<string, string>, prefix: string, followers: number): Promise<{ api: FeedClient; deployment: Deployment; inspector: FanoutClusterView }> {
  const deployment = (cluster = await startCluster({ natsUrl: nats.url, stream, env: { ...env, ...more }, fanoutWorkers: 1 }));
  const inspector = (view = await inspectFanoutCluster({ servers: nats.url, logStream: stream }));
  const api = new FeedClient(deployment.baseUrl);
  for (let start = 0; start < followers; start += 6_000) {
    const follows = Array.from({ length: 6_000 }, (_, i) => ({ source: `timeline:${prefix}${start + i}` as const, target: 'user:star' as const }));
    expect(await api.api.followMany(follows)).toBe(follows.length);
  }
  await waitUntilSettled(api, 60_000);
  return { api, deployment, inspector };
}

it('takes back the jobs of a post that get no fewer, and the planner delivers the post itself', async () => {
  const stream = 'FANOUTWORKERSSTALL';
  const followers = 12_000;
  const { api, deployment, inspector } = await clusterWithFollowers(stream, { FANOUT_JOB_MIN_READERS: '1000', FANOUT_JOB_STALL_MS: '2000' }, 's', followers);

  // A hung worker: it takes jobs from the work queue that every fan-out process pulls from
  // (the stream and consumer JetStreamJobQueue names) and renews their leases without ever
  // finishing them. Its two pulls, waiting beside the planner's own worker, make the post go
  // out as jobs (of up to 2,000 readers), of which the planner's worker takes one at a time.
  const nc = await connect({ servers: nats.url });
  const held: JsMsg[] = [];
  const renewing = setInterval(() => held.forEach((job) => job.working()), 300);
  try {
    const queue = jetstream(nc).consumers;
    const consumers = await Promise.all([1, 2].map(() => queue.get(`${stream}_FANOUT_JOBS`, 'workers')));
    // Each pull waits past the test's end (closing the connection ends it); a job it gets is held.
    for (const consumer of consumers) void consumer.next({ expires: 60_000 }).then((job) => void (job && held.push(job)));
    await waitFor(async () => ((await inspector.jobs()).waitingWorkers >= 3 ? true : undefined), { timeoutMs: 30_000, what: 'the hung worker and the planner waiting for jobs' });
    expect((await api.post('user:star', { actor: 'star', verb: 'post', object: 'stalled' })).status).toBe(201);
    await waitFor(() => (held.length > 0 ? true : undefined), { timeoutMs: 10_000, what: 'the hung worker holding a job' });

    await waitUntilSettled(api, 30_000);
    // Every follower has the post, once; the held job is gone from the queue.
    expect(await timelineCounters(api)).toMatchObject({ timelines: followers, entries: followers });
    // The jobs the hung worker held at least (the planner's own worker may have held one too).
    const { jobsWithdrawn } = await api.counters('fanout');
    expect(jobsWithdrawn).toBeGreaterThanOrEqual(held.length);
    expect(deployment.processes.find((p) => p.name === 'fanout')!.output()).toMatch(new RegExp(`got no fewer in 2000 ms: took ${jobsWithdrawn} back, and delivers the event here`));
    expect(await inspector.jobs()).toMatchObject({ pending: 0, inProgress: 0 });
    for (const n of [0, 1, 1_999, 2_000, 5_999, 6_000, 11_999]) expect((await api.readAll(`timeline:s${n}`)).map((a) => a.object)).toEqual(['stalled']);

    // For five stall times after, the planner delivers every post itself: no job is published.
    expect(deployment.processes.find((p) => p.name === 'fanout')!.output()).toMatch(/and delivers the event here, and every event for the next 10 s/);
    const { jobsPublished } = await api.counters('fanout');
    expect((await api.post('user:star', { actor: 'star', verb: 'post', object: 'after the stall' })).status).toBe(201);
    await waitUntilSettled(api, 30_000);
    expect(await timelineCounters(api)).toMatchObject({ timelines: followers, entries: 2 * followers });
    expect((await api.counters('fanout')).jobsPublished).toBe(jobsPublished);
  } finally {
    clearInterval(renewing);
    await nc.close();
  }
});

it('delivers a post itself when the job queue refuses its jobs, and dead-letters nothing', async () => {
  const stream = 'FANOUTWORKERSREFUSED';
  const followers = 12_000;
  const { api, deployment, inspector } = await clusterWithFollowers(stream, { FANOUT_JOB_MIN_READERS: '1000' }, 'q', followers);

  const nc = await connect({ servers: nats.url });
  try {
    // The job queue refuses every job, as JetStream does when its store is out of room. Two
    // pulls that wait beside the planner's own worker (and never get a job) make the post
    // go out as jobs (6 of 2,000 readers).
    const jsm = await jetstreamManager(nc);
    const jobStream = `${stream}_FANOUT_JOBS`;
    const { config } = await jsm.streams.info(jobStream);
    await jsm.streams.update(jobStream, { ...config, max_bytes: 64, discard: DiscardPolicy.New });
    const consumers = await Promise.all([1, 2].map(() => jetstream(nc).consumers.get(jobStream, 'workers')));
    for (const consumer of consumers) void consumer.next({ expires: 60_000 }).catch(() => undefined);
    await waitFor(async () => ((await inspector.jobs()).waitingWorkers >= 3 ? true : undefined), { timeoutMs: 30_000, what: 'the two pulls and the planner waiting for jobs' });

    expect((await api.post('user:star', { actor: 'star', verb: 'post', object: 'refused' })).status).toBe(201);
    await waitUntilSettled(api, 30_000);
    expect((await api.counters('fanout')).deadLettered).toBe(0);
    expect(await timelineCounters(api)).toMatchObject({ timelines: followers, entries: followers });
    expect(deployment.processes.find((p) => p.name === 'fanout')!.output()).toMatch(/the job queue failed \(.*\): delivers the event here, and every event for the next \d+ s/);
    for (const n of [0, 1_999, 2_000, 11_999]) expect((await api.readAll(`timeline:q${n}`)).map((a) => a.object)).toEqual(['refused']);
  } finally {
    await nc.close();
  }
});
