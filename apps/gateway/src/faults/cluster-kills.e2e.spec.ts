import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FeedId } from '@feedmill/contracts';
import { connectSealedJetStreamLog } from '@feedmill/event-log';
import { FeedClient, readAllEvents, startCluster, startNatsServer, waitUntilEveryServiceCaughtUp, waitUntilSettled, type ClusterDeployment, type NatsServerHandle } from '@feedmill/harness';
import { AcknowledgedWrites, SeededChoices, checkAcknowledgedWrites, checkTimelines, runMixedWorkload } from '@feedmill/testing';

/**
 * The cluster under SIGKILL in the middle of a large fan-out: a producer with thousands of
 * followers posts (each post chunk jobs for two fan-out processes) beside a mixed workload,
 * and one process dies: each service in turn, then the private nats-server itself
 * (restarted on the same store directory). Once it is back, every acknowledged write is in
 * the JetStream log (read apart from the services) and every timeline, the thousands of
 * followers' included, equals the reference computed from it, nothing twice. In `npm test`
 * timeline and nats-server are killed once each; `FEEDMILL_FAULTS=full` kills every process
 * (`FEEDMILL_FAULTS_VICTIMS=timeline,gateway` names them).
 */

const FULL = process.env['FEEDMILL_FAULTS'] === 'full';
const SEED = Number(process.env['FEEDMILL_FAULTS_SEED'] ?? Math.floor(Math.random() * 2 ** 31));
const FOLLOWERS = FULL ? 5_000 : 1_500;
const VICTIMS = process.env['FEEDMILL_FAULTS_VICTIMS']?.split(',') ?? (FULL ? ['content', 'graph', 'timeline', 'fanout', 'fanout-2', 'gateway', 'nats-server'] : ['timeline', 'nats-server']);
const STREAM = 'CLUSTERKILLS';

const star = 'user:star' as FeedId;
const followers = Array.from({ length: FOLLOWERS }, (_, i) => `timeline:f${i}` as FeedId);
const producers = Array.from({ length: 4 }, (_, i) => `user:p${i}` as FeedId);
const readers = Array.from({ length: 8 }, (_, i) => `timeline:r${i}` as FeedId);

let root: string;
let nats: NatsServerHandle;
let cluster: ClusterDeployment | undefined;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'feedmill-cluster-kills-'));
  nats = await startNatsServer({ storeDir: join(root, 'nats') });
});
afterAll(async () => {
  await cluster?.stop();
  await nats?.stop();
  await rm(root, { recursive: true, force: true });
});

async function eventsInJetStream() {
  // Activities are sealed with their feed's key in the log: read as the services read them.
  const log = await connectSealedJetStreamLog({ servers: nats.url, streamName: STREAM });
  try {
    return await readAllEvents(log);
  } finally {
    await log.close();
  }
}

/** Posts by the producer with thousands of followers until `stopped`; each answer written down. */
async function postAsStar(api: FeedClient, writes: AcknowledgedWrites, stopped: Promise<void>, label: string): Promise<void> {
  let stop = false;
  void stopped.then(() => (stop = true));
  let n = 0;
  await Promise.all(
    Array.from({ length: 2 }, async () => {
      while (!stop) {
        writes.unansweredPosts++;
        const answer = await api.post(star, { actor: 'star', verb: 'post', object: `${label}-${n++}` }).catch((error: unknown) => {
          if (stop) return undefined;
          throw error;
        });
        if (!answer) return;
        writes.unansweredPosts--;
        if (answer.status !== 201) {
          if (stop) return;
          throw new Error(`a post by the star answered ${answer.status}: ${JSON.stringify(answer.body)}`);
        }
        writes.posts.set((answer.body as { id: string }).id, { feed: star, removed: 'no' });
        writes.acknowledged++;
      }
    }),
  );
}

it(`keeps every acknowledged write and delivers every post to ${FOLLOWERS} followers when ${VICTIMS.join(', ')} die in turn mid-fan-out`, async () => {
  const started = Date.now();
  const choices = new SeededChoices(SEED);
  console.log(`cluster kills: seed ${SEED} (replay with FEEDMILL_FAULTS_SEED=${SEED}), victims ${VICTIMS.join(', ')}`);
  const config = join(root, 'feeds.json');
  await writeFile(config, JSON.stringify({ groups: { user: { kind: 'producer' }, timeline: { kind: 'timeline', model: 'ring', cap: 2000 } } }));
  cluster = await startCluster({
    natsUrl: nats.url,
    stream: STREAM,
    fanoutWorkers: 2,
    // Posts by the star become chunk jobs that both fan-out processes take.
    env: { LOG_LEVEL: 'log', FEED_CONFIG: config, FANOUT_JOB_MIN_READERS: '1000', FANOUT_JOB_LEASE_MS: '2000', FANOUT_JOB_STALL_MS: '10000', FANOUT_PLANNER_LEASE_MS: '2000' },
    readyTimeoutMs: 60_000,
  });
  const api = new FeedClient(cluster.baseUrl);
  const imported = await api.call('POST', '/v1/follows', { follows: followers.map((source) => ({ source, target: star })) });
  expect(imported.status).toBe(200);
  await waitUntilSettled(api, 60_000);

  const writes = new AcknowledgedWrites();
  const lines: string[] = [];
  for (const [index, victim] of VICTIMS.entries()) {
    let stop!: () => void;
    const stopped = new Promise<void>((resolve) => (stop = resolve));
    const label = `v${index}`;
    const running = Promise.all([postAsStar(api, writes, stopped, label), runMixedWorkload(api, { producers, readers, clients: 4 }, writes, choices, stopped, label)]);
    const killAfterMs = choices.int(400, FULL ? 2500 : 1200);
    await new Promise((resolve) => setTimeout(resolve, killAfterMs));
    // Fan-out is behind here: the star's posts are thousands of deliveries each.
    const { body: status } = await api.call<{ services: Array<{ service: string; position: number }> }>('GET', '/readyz');
    const positions = new Map(status.services.map((s) => [s.service, s.position]));
    stop();
    if (victim === 'nats-server') {
      await nats.kill();
      // Down for a while of the seed's choosing: past the planner's lease at times, so that another process plans after it.
      await new Promise((resolve) => setTimeout(resolve, choices.int(500, 3_000)));
      nats = await startNatsServer({ port: nats.port, storeDir: nats.storeDir });
    } else {
      await cluster.processes.find((p) => p.name === victim)!.kill();
    }
    await running;
    if (victim !== 'nats-server') cluster.restart(victim);

    await waitUntilEveryServiceCaughtUp(api, 120_000).catch(async (error: unknown) => {
      // What the services said of their positions, and the processes of their replays, go with a timeout.
      const { body: stood } = await api.call('GET', '/readyz').catch(() => ({ body: 'no answer' }));
      const said = cluster!.processes.map((p) => `${p.name}: ${p.output().split('\n').filter((line) => /stands|replay|position|rewind|lease|planner|error|warn/i.test(line)).slice(-12).join('\n')}`);
      // Every process's whole output is kept apart, outside the suite's directory, which is removed.
      const kept = await mkdtemp(join(tmpdir(), `feedmill-cluster-kills-${SEED}-`));
      await Promise.all(cluster!.processes.map((p) => writeFile(join(kept, `${p.name}.log`), p.output())));
      throw new Error(`${String(error)} after killing ${victim}\n/readyz: ${JSON.stringify(stood)}\nwhole output of each process in ${kept}\n${said.join('\n')}`);
    });
    const exited = cluster.processes.filter((p) => p.child.exitCode !== null || p.child.signalCode !== null).map((p) => `${p.name}\n${p.output().slice(-2000)}`);
    expect(exited).toEqual([]);
    const events = await eventsInJetStream();
    const acknowledged = checkAcknowledgedWrites(events, writes);
    expect({ victim, findings: acknowledged.findings }).toEqual({ victim, findings: [] });
    const timelines = await checkTimelines(api, events, [...readers, ...followers], [...producers, star]);
    // On a failure, what the processes said about positions and replays goes with it.
    const said = timelines.findings.length ? cluster.processes.map((p) => `${p.name}: ${p.output().split('\n').filter((line) => /stands|replay|position|rewind|lease|planner/i.test(line)).slice(-12).join('\n')}`) : [];
    expect({ victim, findings: timelines.findings.slice(0, 5), said }).toEqual({ victim, findings: [], said: [] });
    lines.push(
      `${victim}: killed after ${killAfterMs} ms with fan-out at ${positions.get('fanout')} of ${positions.get('content')}, log ${events.length} events, ${acknowledged.checked} acknowledged writes checked, ${timelines.entries} timeline entries compared`,
    );
  }
  console.log(`cluster kills: ${VICTIMS.length} kills, ${writes.acknowledged} writes acknowledged and checked after every kill, in ${((Date.now() - started) / 1000).toFixed(1)} s\n${lines.join('\n')}`);
  expect(writes.posts.size).toBeGreaterThan(VICTIMS.length * 5);
}, 40 * 60_000);
