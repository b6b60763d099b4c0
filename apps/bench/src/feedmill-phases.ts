import { loadavg } from 'node:os';
import { FeedClient, type HttpResult } from '@feedmill/harness';
import { runClientLoad } from './client-load.js';
import { BenchDeployment, CpuMeter, round } from './deployment.js';
import type { HttpDriver } from './http-driver.js';
import { mergeLoads, type HttpLoadResult, type PlannedRequest } from './http-load.js';
import type { Latencies } from './latency.js';
import { measurePostToVisible } from './post-to-visible.js';
import type { Profile } from './profiles.js';
import { progressBar, say } from './progress.js';
import { workBetween, type TimelineWork } from './timeline-work.js';
import { IMPORT_REQUESTS_IN_FLIGHT, importBatches, type MixedPlan, type PlannedPost, type Workload } from './workload.js';

/**
 * The phases every feedmill run makes against a started deployment, whatever it measures
 * beside them: the graph and a history of posts, then a mixed phase of readers and posters.
 */
export interface FeedmillUnderLoad {
  deployment: BenchDeployment;
  http: HttpDriver;
  workload: Workload;
  profile: Profile;
}

/** The page size of every timeline read, on both sides of the Redis comparison. */
export const PAGE_SIZE = 25;

export interface LoadedHistory {
  follows: HttpLoadResult;
  /** The log head once graph and fan-out applied the follows. */
  followsHead: number;
  followsSettledSeconds: number;
  warm: HttpLoadResult;
  /** The log head once fan-out applied the warm-up posts. */
  warmHead: number;
  /** From the first warm-up post to fan-out having applied the last. */
  fanoutSeconds: number;
  /** Timeline entries fan-out delivered for the warm-up posts. */
  deliveries: number;
  /** The timeline service's work for the follows and the warm-up posts. */
  work: TimelineWork;
}

const postRequest = ({ producer, object }: PlannedPost): PlannedRequest => ({
  kind: 'post',
  method: 'POST',
  path: `/v1/feeds/user/p${producer}/activities`,
  body: { actor: `p${producer}`, verb: 'post', object },
});

/**
 * The graph, imported through the bulk endpoint, then the warm-up posts (and nothing else),
 * each timed until graph and fan-out have applied all of it.
 */
export async function loadGraphAndHistory({ deployment, http, workload, profile }: FeedmillUnderLoad, warmPosts: readonly PlannedPost[]): Promise<LoadedHistory> {
  const atStart = await deployment.timelineCounters();
  const batches = importBatches(workload.edges);
  say(`importing ${workload.edges.length} follows in ${batches.length} requests`);
  const followsStarted = performance.now();
  const follows = await http.run({
    connections: IMPORT_REQUESTS_IN_FLIGHT,
    amount: batches.length,
    requests: batches.map((edges) => ({
      kind: 'follow',
      method: 'POST',
      path: '/v1/follows',
      body: { follows: edges.map(([reader, producer]) => ({ source: `timeline:r${reader}`, target: `user:p${producer}` })) },
    })),
  });
  const followsHead = await deployment.settled();
  const followsSettledSeconds = (performance.now() - followsStarted) / 1000;

  const deliveredBefore = (await deployment.timelineCounters()).delivered;
  say(`${warmPosts.length} warm-up posts over ${profile.connections} connections`);
  const fanoutStarted = performance.now();
  const warm = await http.run({ connections: profile.connections, amount: warmPosts.length, requests: warmPosts.map(postRequest) });
  const warmHead = await deployment.settled();
  const fanoutSeconds = (performance.now() - fanoutStarted) / 1000;
  const atEnd = await deployment.timelineCounters();
  const deliveries = atEnd.delivered - deliveredBefore;
  say(`fan-out delivered ${deliveries} timeline entries in ${round(fanoutSeconds, 2)} s`);
  return { follows, followsHead, followsSettledSeconds, warm, warmHead, fanoutSeconds, deliveries, work: workBetween(atStart, atEnd) };
}

export interface MixedPhaseResult {
  /** Reads and posts, by kind. */
  load: HttpLoadResult;
  postToVisible: Latencies;
  cpu: ReturnType<CpuMeter['stop']>;
  /** The machine's 1-minute load average as the phase began: other work on a shared machine shows here. */
  loadAverage: number;
  /** The timeline service's work for the phase's reads and posts (and probes), until fan-out applied them all. */
  work: TimelineWork;
}

/** A post's answer, or a failure for the load's count when it is not a 201. */
function expectCreated(answer: HttpResult): HttpResult {
  if (answer.status !== 201) throw new Error(`post answered ${answer.status}`);
  return answer;
}

/**
 * Readers reading as fast as they are answered beside posts at a set pace, with
 * post-to-visible probes (`probes` of them, none when 0) and CPU sampling beside them;
 * over once fan-out has applied every post.
 */
export async function runMixedPhase({ deployment, http, workload, profile }: FeedmillUnderLoad, plan: MixedPlan, probes: number): Promise<MixedPhaseResult> {
  const loadAverage = round(loadavg()[0]!, 2);
  const before = await deployment.timelineCounters();
  const cpu = new CpuMeter();
  cpu.start(() => deployment.pids);
  let over = false;
  const probing = measurePostToVisible(deployment.baseUrl, workload, probes, () => over);
  const bar = progressBar(`mixed: ${profile.mixedReaders} readers, ${profile.mixedPostsPerSecond} posts/s for ${profile.mixedSeconds}s`, profile.mixedSeconds);
  const started = performance.now();
  const ticker = setInterval(() => bar.update(Math.round((performance.now() - started) / 1000)), 1000);
  const api = new FeedClient(deployment.baseUrl);
  let posted = 0;
  const load = mergeLoads(
    await Promise.all([
      http.run({
        seconds: profile.mixedSeconds,
        connections: profile.mixedReaders,
        requests: plan.reads.map((reader) => ({ kind: 'read', method: 'GET', path: `/v1/feeds/timeline/r${reader}?limit=${PAGE_SIZE}` })),
      }),
      // Posts at a set pace from this process: a few hundred a second cost it little.
      runClientLoad({
        clients: profile.mixedPosters,
        seconds: profile.mixedSeconds,
        pace: profile.mixedPostsPerSecond,
        next: () => {
          const { producer, object } = plan.posts[posted++ % plan.posts.length]!;
          return { kind: 'post', run: () => api.post(`user:p${producer}`, { actor: `p${producer}`, verb: 'post', object }).then(expectCreated) };
        },
      }),
    ]),
  );
  over = true;
  clearInterval(ticker);
  bar.stop();
  const postToVisible = await probing;
  const cpuUse = cpu.stop();
  await deployment.settled();
  const work = workBetween(before, await deployment.timelineCounters());
  return { load, postToVisible, cpu: cpuUse, loadAverage, work };
}
