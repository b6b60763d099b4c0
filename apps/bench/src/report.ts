import { IMPORT_BATCH } from './workload.js';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { latencyDistribution, throughputOverTime } from './charts.js';
import type { InProcessResults } from './in-process.js';
import type { LatencySummary } from './latency.js';
import type { RedisBaselineResults } from './redis-baseline.js';
import { totalWork, type TimelineWork, type WorkByPhase } from './timeline-work.js';
import { formatFigure, formatRatio, type VersusRedisRow } from './versus-redis.js';

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
    mixedReaders: number;
    mixedPosters: number;
    mixedPostsPerSecond: number;
    /** Connections of the warm-up posts. */
    connections: number;
    loadGenerator: 'wrk' | 'autocannon';
    /** The standalone's `HTTP_WORKERS` when the run set it; null for its default. */
    httpWorkers: number | null;
  };
  loading: { followsPerSecond: number; followsSettledPerSecond: number; followLatencyMs: LatencySummary; warmPostsPerSecond: number; warmPostLatencyMs: LatencySummary };
  posts: { acceptedPerSecond: number; latencyMs: LatencySummary };
  fanout: { deliveries: number; seconds: number; deliveriesPerSecond: number };
  fanoutInProcess: InProcessResults['fanoutInProcess'];
  postToVisibleMs: LatencySummary;
  reads: { http: { readsPerSecond: number; latencyMs: LatencySummary }; inProcess: InProcessResults['reads']['ours'] };
  rebuild: { deployment: { events: number; seconds: number; eventsPerSecond: number }; inProcessProjections: InProcessResults['projectionRebuild'] };
  memory: InProcessResults['memory'];
  cpu: { meanCores: number; maxCores: number; samples: number };
  /** The timeline service's work (entries written, feeds queried at read time) before the mixed phase, in it, and in all. */
  work: WorkByPhase;
  /** The machine's 1-minute load average as the mixed phase began: other work on a shared machine shows here. */
  mixedLoadAverage: number;
  baseline: { fanout: InProcessResults['fanout']; reads: Omit<InProcessResults['reads'], 'samples'> };
  failures: { httpNon2xx: number; transportErrors: number };
  throughput: { mixed: Array<Record<string, number>>; warm: Array<Record<string, number>> };
  /** The same workload on Redis home feeds (the Mastodon design), or why it did not run. */
  redis: RedisBaselineResults;
  /** Figures both have, with feedmill's advantage; null without the Redis baseline. */
  versusRedis: VersusRedisRow[] | null;
}

export interface ChartSamples {
  post: number[];
  read: number[];
  postToVisible: number[];
  inProcessOurs: number[];
  inProcessNaive: number[];
  redisRead: number[];
}

const l = (s: LatencySummary) => `${s.p50} | ${s.p95} | ${s.p99} | ${s.max}`;
const work = (w: TimelineWork) => `${totalWork(w).toLocaleString('en')} = ${w.entriesWritten.toLocaleString('en')} + ${w.feedsQueried.toLocaleString('en')}`;

export function markdown(r: BenchResults): string {
  return `# feedmill benchmark: ${r.profile}, ${r.mode}, ${r.model} timelines

${r.startedAt}, ${r.durationSeconds} s, on ${r.machine.cpus} × ${r.machine.cpuModel}, ${r.machine.memoryGiB} GiB, Node ${r.machine.node}.
Reproduce: \`${r.command}\` (seed ${r.seed}).

## Workload
${r.workload.readers.toLocaleString('en')} readers, ${r.workload.producers.toLocaleString('en')} producers, ${r.workload.followEdges.toLocaleString('en')} follow edges (followers per producer: median ${r.workload.followers.p50}, p99 ${r.workload.followers.p99}, max ${r.workload.followers.max}); ${r.workload.warmPosts.toLocaleString('en')} posts over ${r.workload.connections} HTTP connections, then a ${r.workload.mixedSeconds} s mixed phase: ${r.workload.mixedReaders} readers, each a connection with one request in flight, as fast as they are answered, beside ${r.workload.mixedPostsPerSecond} posts per second, paced, at most ${r.workload.mixedPosters} in flight. HTTP load from ${r.workload.loadGenerator}${r.workload.httpWorkers === null ? '' : `; standalone with HTTP_WORKERS=${r.workload.httpWorkers}`}.

## Figures
| figure | value | p50 ms | p95 ms | p99 ms | max ms |
| --- | --- | --- | --- | --- | --- |
| posts accepted (mixed phase, HTTP) | ${r.posts.acceptedPerSecond.toLocaleString('en')} /s | ${l(r.posts.latencyMs)} |
| timeline reads (mixed phase, HTTP) | ${r.reads.http.readsPerSecond.toLocaleString('en')} /s | ${l(r.reads.http.latencyMs)} |
| timeline reads (in-process) | ${r.reads.inProcess.readsPerSecond.toLocaleString('en')} /s | ${l(r.reads.inProcess.latencyMs)} |
| post to visible in a follower's timeline | ${r.postToVisibleMs.count} probes | ${l(r.postToVisibleMs)} |
| fan-out deliveries (warm phase, deployment) | ${r.fanout.deliveriesPerSecond.toLocaleString('en')} /s | |
| posts accepted (warm phase, posts only) | ${r.loading.warmPostsPerSecond.toLocaleString('en')} /s | ${l(r.loading.warmPostLatencyMs)} |
| follows imported (\`POST /v1/follows\`, ${IMPORT_BATCH.toLocaleString('en')} per request) | ${r.loading.followsPerSecond.toLocaleString('en')} /s accepted, ${r.loading.followsSettledPerSecond.toLocaleString('en')} /s until fan-out applied them | ${l(r.loading.followLatencyMs)} per request |
| rebuild on restart (deployment, all projections and timelines) | ${r.rebuild.deployment.eventsPerSecond.toLocaleString('en')} events/s (${r.rebuild.deployment.events.toLocaleString('en')} in ${r.rebuild.deployment.seconds} s) | |
| fan-out with no transport (in-process: plan and apply deliveries) | ${r.fanoutInProcess.deliveriesPerSecond.toLocaleString('en')} /s | |
| rebuild of content and graph projections (in-process) | ${r.rebuild.inProcessProjections.eventsPerSecond.toLocaleString('en')} events/s | |
| memory per follow edge | ${r.memory.bytesPerFollowEdge ?? 'n/a'} bytes | |
| memory per timeline entry, activities apart (${r.memory.timelineEntryMethod}) | ${r.memory.bytesPerTimelineEntry ?? 'n/a'} bytes | |
| timeline work: entries written + feeds queried at read time (before the mixed phase; mixed phase, probes' reads included) | ${work(r.work.total)} (${work(r.work.beforeMixed)}; ${work(r.work.mixed)}) | |
| CPU during the mixed phase | ${r.cpu.meanCores} cores on average (max ${r.cpu.maxCores}) | |
| failed requests | ${r.failures.httpNon2xx} non-2xx, ${r.failures.transportErrors} transport errors | |

## Against the naive version, same data, same run
| | ours | naive | ratio |
| --- | --- | --- | --- |
| fan-out deliveries/s through the ${r.baseline.fanout.transport} transport (batched requests vs one awaited request per follower; ${r.baseline.fanout.posts} posts, ${r.baseline.fanout.deliveries.toLocaleString('en')} deliveries) | ${r.baseline.fanout.ours.deliveriesPerSecond.toLocaleString('en')} | ${r.baseline.fanout.naive.deliveriesPerSecond.toLocaleString('en')} | ${r.baseline.fanout.speedup}× |
| timeline reads/s (capped cache + pull vs query every followed feed) | ${r.baseline.reads.ours.readsPerSecond.toLocaleString('en')} | ${r.baseline.reads.naive.readsPerSecond.toLocaleString('en')} | ${r.baseline.reads.speedup}× |
| read latency p50 / p99 ms | ${r.baseline.reads.ours.latencyMs.p50} / ${r.baseline.reads.ours.latencyMs.p99} | ${r.baseline.reads.naive.latencyMs.p50} / ${r.baseline.reads.naive.latencyMs.p99} | |

Fan-out: both sides go through the deployment's transport to a timeline service of their own. Reads: both sides run in-process, so the naive ratio leaves out the round trip it would also pay per followed feed.

${versusRedisSection(r)}`;
}

/** The Redis home-feed baseline: the table, the check that both hold the same timelines, and what each side pays for. */
export function versusRedisSection(r: Pick<BenchResults, 'redis' | 'versusRedis' | 'mode' | 'workload' | 'fanout' | 'cpu' | 'machine' | 'mixedLoadAverage'>): string {
  const redis = r.redis;
  if (!redis.available || r.versusRedis === null) {
    return `## feedmill vs Redis home feeds
Not measured: ${redis.available ? 'no figures' : redis.reason}. The baseline needs a Redis it may flush: \`REDIS_URL\` (default \`redis://127.0.0.1:6379\`), database ${redis.db} unless the URL names one.
`;
  }
  const rows = r.versusRedis.map((row) => `| ${row.figure} | ${formatFigure(row.feedmill, row.unit)} | ${formatFigure(row.redis, row.unit)} | ${formatRatio(row.ratio)} |`).join('\n');
  const check = redis.check;
  const checkLine =
    check.mismatches === 0
      ? `all ${check.matches} match`
      : `**${check.mismatches} DIFFER**, ${check.matches} match; for instance:\n${check.examples.map((e) => `- ${e}`).join('\n')}`;
  const durable = r.mode === 'standalone' ? 'fsync’d to its log file' : 'stored in JetStream';
  const disk = redis.persistence.aof ? 'appends to its AOF' : redis.persistence.rdbSave ? `snapshots by the rules \`${redis.persistence.rdbSave}\` and has no AOF` : 'keeps nothing on disk (no AOF, no snapshots)';
  const failures = redis.failures.calls + redis.failures.fanoutJobs;
  return `## feedmill vs Redis home feeds
The design teams hand-roll instead, after Mastodon's FeedManager, on Redis ${redis.redisVersion} at ${redis.url} (database ${redis.db}, flushed before and after the run): follower sets (\`SADD followers:<producer> <reader>\`); a post stores its JSON once (\`SET activity:<id>\`, a snowflake id) and queues a fan-out job (\`LPUSH\`) in one pipeline, and is accepted then; ${redis.design.fanoutWorkers} fan-out workers pop the jobs (\`BRPOP\`) and, per ${redis.design.followersPerPipeline.toLocaleString('en')} followers, pipeline \`ZADD feed:<reader> <id> <id>\` + \`ZREMRANGEBYRANK feed:<reader> 0 -${redis.design.keepPerFeed + 1}\` (${redis.design.keepPerFeed} kept, as feedmill's cap); a read is \`ZREVRANGE feed:<reader> 0 ${redis.design.pageSize - 1}\` + \`MGET\` of the bodies, the page size of feedmill's reads. Same graph, same phases, same ${r.workload.connections} concurrent clients for the warm-up posts, same ${r.workload.mixedSeconds} s mixed phase of ${r.workload.mixedReaders} readers beside ${r.workload.mixedPostsPerSecond} posts per second, making the same reads and posts, same seed; run after feedmill stopped, so that each had the machine to itself but for the load generator.

| figure | feedmill | Redis | ratio |
| --- | --- | --- | --- |
${rows}

Ratio: feedmill ÷ Redis for rates, Redis ÷ feedmill for latencies and memory, so that above 1 feedmill is better and below 1 Redis is. Deliveries in the warm-up: feedmill ${r.fanout.deliveries.toLocaleString('en')}, Redis ${redis.warm.deliveries.toLocaleString('en')}. Memory: Redis's \`used_memory\` grew ${((redis.memory.usedMemoryAfter - redis.memory.usedMemoryBefore) / 2 ** 20).toFixed(1)} MiB over the warm-up for ${redis.memory.entries.toLocaleString('en')} stored entries; the post bodies (\`MEMORY USAGE\` of a sample, times their number: ${(redis.memory.postBodies / 2 ** 20).toFixed(1)} MiB) are left out, as feedmill's figure leaves out its activity objects.

Same timelines: the warm-up's posts went to Redis in the order feedmill's timelines show them (concurrent clients make each system receive them in its own interleaving, and neighbours would swap places otherwise). For ${check.readers} readers spread over all, the newest ${check.newest} entries of each side, compared by author and object (the systems' ids differ), ${checkLine} (${check.entries.toLocaleString('en')} entries compared).

Who pays for what: every feedmill figure is a full HTTP request through its gateway, validated, and acknowledged once its event is ${durable}; ${r.workload.loadGenerator === 'wrk' ? 'wrk, a load generator in C, generates that load' : 'autocannon generates that load in the bench process'}. The Redis figures have no HTTP server in front: the clients are ${redis.design.clients} async loops in the bench process over ${redis.design.clientConnections} connections, which also builds each page's JSON and runs the fan-out workers in a thread of their own (a job queue's workers run beside the API, not in it); this Redis ${disk}, so it acknowledges from memory. An application serving this design over HTTP would add its own HTTP cost to every Redis figure. CPU in the mixed phase: Redis server ${redis.cpu.redisServer === null ? 'not sampled (not on this machine)' : `${redis.cpu.redisServer.meanCores} cores on average`}, bench process (clients and fan-out thread) ${redis.cpu.benchProcess.meanCores} cores; feedmill's deployment ${r.cpu.meanCores} cores. Load on the machine (1-minute load average) as each mixed phase began: feedmill ${r.mixedLoadAverage}, Redis ${redis.mixedLoadAverage}, on ${r.machine.cpus} cores. Failures on the Redis side: ${failures === 0 ? 'none' : `${redis.failures.calls} calls and ${redis.failures.fanoutJobs} fan-out jobs failed, first: ${redis.failures.first}`}.
`;
}

export function html(r: BenchResults, samples: ChartSamples): string {
  const charts = [
    latencyDistribution('HTTP latency in the mixed phase', [
      { name: 'post', samples: samples.post },
      { name: 'timeline read', samples: samples.read },
    ]),
    samples.redisRead.length === 0
      ? ''
      : latencyDistribution('Timeline reads in the mixed phase: feedmill (HTTP) vs Redis (from the bench process)', [
          { name: 'feedmill', samples: samples.read },
          { name: 'Redis', samples: samples.redisRead },
        ]),
    latencyDistribution('Post to visible in a follower’s timeline', [{ name: 'post to visible', samples: samples.postToVisible }]),
    latencyDistribution('In-process timeline reads: ours vs naive', [
      { name: 'ours', samples: samples.inProcessOurs },
      { name: 'naive', samples: samples.inProcessNaive },
    ]),
    throughputOverTime('Mixed phase throughput', [
      { name: 'posts/s', perSecond: r.throughput.mixed.map((s) => s['post'] ?? 0) },
      { name: 'reads/s', perSecond: r.throughput.mixed.map((s) => s['read'] ?? 0) },
      ...(r.redis.available
        ? [
            { name: 'Redis posts/s', perSecond: r.redis.throughput.mixed.map((s) => s['post'] ?? 0) },
            { name: 'Redis reads/s', perSecond: r.redis.throughput.mixed.map((s) => s['read'] ?? 0) },
          ]
        : []),
    ]),
    throughputOverTime('Warm phase: posts accepted per second', [{ name: 'posts/s', perSecond: r.throughput.warm.map((s) => s['post'] ?? 0) }]),
  ].join('\n');
  return `<!doctype html><html><head><meta charset="utf-8"><title>feedmill benchmark ${r.profile} ${r.mode}</title>
<style>body{font-family:sans-serif;max-width:1000px;margin:2em auto;color:#222}table{border-collapse:collapse;margin:1em 0}th,td{border:1px solid #ccc;padding:4px 8px;font-size:13px}th{background:#f4f4f4;text-align:left}p,li{font-size:14px;line-height:1.45}figure{display:inline-block;margin:1em}figcaption{font-weight:bold;font-size:14px}</style></head>
<body>
${markdownToHtml(markdown(r))}
${charts}
</body></html>`;
}

const escapeHtml = (text: string) => text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);

function inline(text: string): string {
  return escapeHtml(text.replace(/\\\|/g, '|'))
    .replace(/`([^`]+)`/g, '<code>$1</code>')
    .replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>');
}

/**
 * The report's own markdown as HTML: headings, paragraphs, lists and tables, with inline
 * code and bold; enough for what {@link markdown} writes, and nothing more.
 */
export function markdownToHtml(md: string): string {
  const out: string[] = [];
  let block: { kind: 'p' | 'ul' | 'table'; lines: string[] } | undefined;
  const flush = () => {
    if (!block) return;
    if (block.kind === 'p') out.push(`<p>${block.lines.map(inline).join(' ')}</p>`);
    if (block.kind === 'ul') out.push(`<ul>${block.lines.map((line) => `<li>${inline(line.slice(2))}</li>`).join('')}</ul>`);
    if (block.kind === 'table') {
      const rows = block.lines.filter((line) => !/^\|(\s*-+\s*\|)+$/.test(line)).map((line) => line.slice(1, -1).split(/(?<!\\)\|/).map((cell) => cell.trim()));
      const [head, ...body] = rows;
      out.push(`<table><tr>${head!.map((cell) => `<th>${inline(cell)}</th>`).join('')}</tr>${body.map((row) => `<tr>${row.map((cell) => `<td>${inline(cell)}</td>`).join('')}</tr>`).join('')}</table>`);
    }
    block = undefined;
  };
  for (const line of md.split('\n')) {
    const heading = /^(#{1,3}) (.*)$/.exec(line);
    const kind = line.startsWith('|') ? 'table' : line.startsWith('- ') ? 'ul' : 'p';
    if (heading || line.trim() === '') {
      flush();
      if (heading) out.push(`<h${heading[1]!.length}>${inline(heading[2]!)}</h${heading[1]!.length}>`);
      continue;
    }
    if (block?.kind !== kind) flush();
    (block ??= { kind, lines: [] }).lines.push(line);
  }
  flush();
  return out.join('\n');
}

export async function writeReport(dir: string, results: BenchResults, samples: ChartSamples): Promise<void> {
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'results.json'), JSON.stringify(results, null, 2));
  await writeFile(join(dir, 'report.md'), markdown(results));
  await writeFile(join(dir, 'report.html'), html(results, samples));
}
