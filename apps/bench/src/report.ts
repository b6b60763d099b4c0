import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { latencyDistribution, throughputOverTime } from './charts.js';
import type { InProcessResults } from './in-process.js';
import type { LatencySummary } from './latency.js';

export interface BenchResults {
  profile: string;
  mode: string;
  model: string;
  seed: number;
  command: string;
  machine: { cpus: number; cpuModel: string; memoryGiB: number; node: string; platform: string };
  startedAt: string;
  durationSeconds: number;
  workload: {
    readers: number;
    producers: number;
    followEdges: number;
    followers: { max: number; p50: number; p99: number; producersWithoutFollowers: number };
    warmPosts: number;
    mixedSeconds: number;
    readsPerWrite: number;
    connections: number;
  };
  loading: { followsPerSecond: number; followLatencyMs: LatencySummary; warmPostsPerSecond: number; warmPostLatencyMs: LatencySummary };
  posts: { acceptedPerSecond: number; latencyMs: LatencySummary };
  fanout: { deliveries: number; seconds: number; deliveriesPerSecond: number };
  fanoutInProcess: InProcessResults['fanoutInProcess'];
  postToVisibleMs: LatencySummary;
  reads: { http: { readsPerSecond: number; latencyMs: LatencySummary }; inProcess: InProcessResults['reads']['ours'] };
  rebuild: { deployment: { events: number; seconds: number; eventsPerSecond: number }; inProcessProjections: InProcessResults['projectionRebuild'] };
  memory: InProcessResults['memory'];
  cpu: { meanCores: number; maxCores: number; samples: number };
  baseline: { fanout: InProcessResults['fanout']; reads: Omit<InProcessResults['reads'], 'samples'> };
  failures: { httpNon2xx: number; transportErrors: number };
  throughput: { mixed: Array<Record<string, number>>; warm: Array<Record<string, number>> };
}

export interface ChartSamples {
  post: number[];
  read: number[];
  postToVisible: number[];
  inProcessOurs: number[];
  inProcessNaive: number[];
}

const l = (s: LatencySummary) => `${s.p50} | ${s.p95} | ${s.p99} | ${s.max}`;

export function markdown(r: BenchResults): string {
  return `# feedmill benchmark: ${r.profile}, ${r.mode}, ${r.model} timelines

${r.startedAt}, ${r.durationSeconds} s, on ${r.machine.cpus} × ${r.machine.cpuModel}, ${r.machine.memoryGiB} GiB, Node ${r.machine.node}.
Reproduce: \`${r.command}\` (seed ${r.seed}).

## Workload
${r.workload.readers.toLocaleString('en')} readers, ${r.workload.producers.toLocaleString('en')} producers, ${r.workload.followEdges.toLocaleString('en')} follow edges (followers per producer: median ${r.workload.followers.p50}, p99 ${r.workload.followers.p99}, max ${r.workload.followers.max}); ${r.workload.warmPosts.toLocaleString('en')} posts before a ${r.workload.mixedSeconds} s mixed phase of ${r.workload.readsPerWrite} reads per write over ${r.workload.connections} HTTP connections (autocannon).

## Figures
| figure | value | latency ms: p50 \\| p95 \\| p99 \\| max |
| --- | --- | --- |
| posts accepted (mixed phase, HTTP) | ${r.posts.acceptedPerSecond.toLocaleString('en')} /s | ${l(r.posts.latencyMs)} |
| timeline reads (mixed phase, HTTP) | ${r.reads.http.readsPerSecond.toLocaleString('en')} /s | ${l(r.reads.http.latencyMs)} |
| timeline reads (in-process) | ${r.reads.inProcess.readsPerSecond.toLocaleString('en')} /s | ${l(r.reads.inProcess.latencyMs)} |
| post to visible in a follower's timeline | ${r.postToVisibleMs.count} probes | ${l(r.postToVisibleMs)} |
| fan-out deliveries (warm phase, deployment) | ${r.fanout.deliveriesPerSecond.toLocaleString('en')} /s | |
| posts accepted (warm phase, posts only) | ${r.loading.warmPostsPerSecond.toLocaleString('en')} /s | ${l(r.loading.warmPostLatencyMs)} |
| follows accepted (graph load) | ${r.loading.followsPerSecond.toLocaleString('en')} /s | ${l(r.loading.followLatencyMs)} |
| rebuild on restart (deployment, all projections and timelines) | ${r.rebuild.deployment.eventsPerSecond.toLocaleString('en')} events/s (${r.rebuild.deployment.events.toLocaleString('en')} in ${r.rebuild.deployment.seconds} s) | |
| fan-out with no transport (in-process: plan and apply deliveries) | ${r.fanoutInProcess.deliveriesPerSecond.toLocaleString('en')} /s | |
| rebuild of content and graph projections (in-process) | ${r.rebuild.inProcessProjections.eventsPerSecond.toLocaleString('en')} events/s | |
| memory per follow edge | ${r.memory.bytesPerFollowEdge ?? 'n/a'} bytes | |
| memory per timeline entry, activities apart (${r.memory.timelineEntryMethod}) | ${r.memory.bytesPerTimelineEntry ?? 'n/a'} bytes | |
| CPU during the mixed phase | ${r.cpu.meanCores} cores on average (max ${r.cpu.maxCores}) | |
| failed requests | ${r.failures.httpNon2xx} non-2xx, ${r.failures.transportErrors} transport errors | |

## Against the naive version, same data, same run
| | ours | naive | ratio |
| --- | --- | --- | --- |
| fan-out deliveries/s through the ${r.baseline.fanout.transport} transport (batched requests vs one awaited request per follower; ${r.baseline.fanout.posts} posts, ${r.baseline.fanout.deliveries.toLocaleString('en')} deliveries) | ${r.baseline.fanout.ours.deliveriesPerSecond.toLocaleString('en')} | ${r.baseline.fanout.naive.deliveriesPerSecond.toLocaleString('en')} | ${r.baseline.fanout.speedup}× |
| timeline reads/s (capped cache + pull vs query every followed feed) | ${r.baseline.reads.ours.readsPerSecond.toLocaleString('en')} | ${r.baseline.reads.naive.readsPerSecond.toLocaleString('en')} | ${r.baseline.reads.speedup}× |
| read latency p50 / p99 ms | ${r.baseline.reads.ours.latencyMs.p50} / ${r.baseline.reads.ours.latencyMs.p99} | ${r.baseline.reads.naive.latencyMs.p50} / ${r.baseline.reads.naive.latencyMs.p99} | |

Fan-out: both sides go through the deployment's transport to a timeline service of their own. Reads: both sides run in-process, so the naive ratio leaves out the round trip it would also pay per followed feed.
`;
}

export function html(r: BenchResults, samples: ChartSamples): string {
  const charts = [
    latencyDistribution('HTTP latency in the mixed phase', [
      { name: 'post', samples: samples.post },
      { name: 'timeline read', samples: samples.read },
    ]),
    latencyDistribution('Post to visible in a follower’s timeline', [{ name: 'post to visible', samples: samples.postToVisible }]),
    latencyDistribution('In-process timeline reads: ours vs naive', [
      { name: 'ours', samples: samples.inProcessOurs },
      { name: 'naive', samples: samples.inProcessNaive },
    ]),
    throughputOverTime('Mixed phase throughput', [
      { name: 'posts/s', perSecond: r.throughput.mixed.map((s) => s['post'] ?? 0) },
      { name: 'reads/s', perSecond: r.throughput.mixed.map((s) => s['read'] ?? 0) },
    ]),
    throughputOverTime('Warm phase: posts accepted per second', [{ name: 'posts/s', perSecond: r.throughput.warm.map((s) => s['post'] ?? 0) }]),
  ].join('\n');
  const table = markdown(r)
    .split('\n')
    .filter((line) => line.startsWith('|') && !line.startsWith('| ---'))
    .map((line) => `<tr>${line.slice(1, -1).split(' | ').map((cell) => `<td>${cell.replace(/\\\|/g, '|').replace(/`/g, '')}</td>`).join('')}</tr>`)
    .join('\n');
  return `<!doctype html><html><head><meta charset="utf-8"><title>feedmill benchmark ${r.profile} ${r.mode}</title>
<style>body{font-family:sans-serif;max-width:1000px;margin:2em auto;color:#222}table{border-collapse:collapse}td{border:1px solid #ccc;padding:4px 8px;font-size:13px}figure{display:inline-block;margin:1em}figcaption{font-weight:bold;font-size:14px}</style></head>
<body><h1>feedmill benchmark: ${r.profile}, ${r.mode}</h1><p>${r.startedAt}, ${r.durationSeconds} s on ${r.machine.cpus} × ${r.machine.cpuModel}. Reproduce: <code>${r.command}</code></p>
<table>${table}</table>
${charts}
</body></html>`;
}

export async function writeReport(dir: string, results: BenchResults, samples: ChartSamples): Promise<void> {
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'results.json'), JSON.stringify(results, null, 2));
  await writeFile(join(dir, 'report.md'), markdown(results));
  await writeFile(join(dir, 'report.html'), html(results, samples));
}
