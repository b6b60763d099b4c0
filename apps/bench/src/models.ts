import 'reflect-metadata';
import { mkdir, writeFile } from 'node:fs/promises';
import { cpus, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Logger } from '@nestjs/common';
import { timelineModels, type TimelineModel } from '@feedmill/contracts';
import { BenchDeployment, round, startFailureReason, type Mode } from './deployment.js';
import { loadGraphAndHistory, runMixedPhase } from './feedmill-phases.js';
import { HttpDriver } from './http-driver.js';
import { Latencies } from './latency.js';
import { ALL_PULL, ALL_PUSH, checkGoals, comparisonMarkdown, PER_EDGE, type ModelComparison, type ModelRun } from './model-comparison.js';
import { sampleReaders } from './newest-check.js';
import { profiles, type Profile } from './profiles.js';
import { say } from './progress.js';
import { compareTimelineSets, feedmillTimelines, type NamedPages } from './timeline-sets.js';
import { totalWork, workByPhase } from './timeline-work.js';
import { drawMixedPlan, drawPosts, Workload } from './workload.js';

/**
 * The timeline models side by side: the feedmill phases of `npm run bench` (graph, warm-up
 * posts, mixed phase) for each model in turn, on a fresh deployment, with the same seed and
 * the same requests; then one table of the timeline service's work and what readers and
 * posters got, and the goals of per-edge push/pull, each met or not.
 */
const { values } = parseArgs({
  options: {
    profile: { type: 'string', default: 'small' },
    models: { type: 'string', default: [ALL_PUSH, ALL_PULL, PER_EDGE].join(',') },
    mode: { type: 'string', default: 'standalone' },
    seed: { type: 'string', default: '42' },
    out: { type: 'string' },
    'mixed-seconds': { type: 'string' },
  },
});

/** Readers whose timelines are compared across the models after the warm-up. */
const CHECKED_READERS = 200;

const chosen: Profile | undefined = profiles[values.profile as Profile['name']];
if (!chosen) throw new Error(`--profile must be one of ${Object.keys(profiles).join(', ')}`);
const mixedSeconds = values['mixed-seconds'] === undefined ? chosen.mixedSeconds : Number(values['mixed-seconds']);
if (!Number.isInteger(mixedSeconds) || mixedSeconds < 1) throw new Error('--mixed-seconds must be a whole number, 1 or more');
const profile: Profile = { ...chosen, mixedSeconds };
const models = values.models.split(',').map((model) => model.trim()).filter((model) => model !== '');
if (models.length === 0 || new Set(models).size !== models.length) throw new Error('--models must name each model once, separated by commas');
if (values.mode !== 'standalone' && values.mode !== 'cluster') throw new Error('--mode must be standalone or cluster');
const mode = values.mode as Mode;
const seed = Number(values.seed);
if (!Number.isInteger(seed)) throw new Error('--seed must be a whole number');
const outDir = resolve(values.out ?? `bench-results/models-${profile.name}-${mode}`);
Logger.overrideLogger(['error', 'warn']);

const startedAt = new Date();
say(`feedmill timeline models: ${models.join(', ')} on profile ${profile.name}, ${mode}, seed ${seed} -> ${outDir}`);
const workload = new Workload(profile, seed);
// Drawn once: every model is sent the same posts and reads.
const warmPosts = drawPosts(workload, profile.warmPosts);
const plan = drawMixedPlan(workload);
const checkedReaders = sampleReaders(CHECKED_READERS, profile.readers).map((i) => `r${i}`);
const celebrityEdges = workload.edges.filter(([, producer]) => producer < workload.celebrities).length;
say(`workload: ${workload.readers.length} readers, ${workload.producers.length} producers, ${workload.edges.length} follow edges${workload.celebrities === 0 ? '' : ` (${celebrityEdges} to ${workload.celebrities} celebrities)`}`);

const isTimelineModel = (model: string): model is TimelineModel => (timelineModels as readonly string[]).includes(model);
let reference: NamedPages | undefined;
/** The deployment under test: one model's at a time. */
let current: BenchDeployment | undefined;
const http = new HttpDriver(() => current!.baseUrl);
say(`HTTP load from ${http.name}${http.name === 'wrk' ? '' : ' (wrk is not installed: autocannon takes about a core of this machine from the system under test)'}`);

async function runModel(model: string): Promise<ModelRun> {
  if (!isTimelineModel(model)) return { model, outcome: 'skipped', reason: `this build's timeline models are ${timelineModels.join(', ')}` };
  const deployment = (current = new BenchDeployment(mode, model));
  try {
    try {
      await deployment.start();
    } catch (error) {
      return { model, outcome: 'skipped', reason: `the deployment did not start: ${startFailureReason(error)}` };
    }
    say(`${model}: ${mode} deployment ready at ${deployment.baseUrl}`);
    const underLoad = { deployment, http, workload, profile };
    const history = await loadGraphAndHistory(underLoad, warmPosts);
    const pages = await feedmillTimelines(deployment.baseUrl, checkedReaders);
    const timelines = reference ? { reference: reference.name, ...compareTimelineSets(checkedReaders, reference, { name: model, pages }) } : null;
    reference ??= { name: model, pages };
    // No post-to-visible probes: their polling would add reads to the work measured.
    const mixed = await runMixedPhase(underLoad, plan, 0);
    const kind = (name: string) => mixed.load.byKind[name] ?? { ok: 0, failed: 0, latency: new Latencies() };
    const loads = [history.follows, history.warm, mixed.load];
    const warmUpPosts = history.warm.byKind['post']?.ok ?? 0;
    return {
      model,
      outcome: 'measured',
      figures: {
        work: workByPhase(history.work, mixed.work),
        warmUp: {
          posts: warmUpPosts,
          deliveries: history.deliveries,
          secondsUntilDelivered: round(history.fanoutSeconds, 2),
          postsPerSecondUntilDelivered: Math.round(warmUpPosts / history.fanoutSeconds),
        },
        mixed: {
          seconds: round(mixed.load.seconds, 2),
          posts: kind('post').ok,
          reads: kind('read').ok,
          postsPerSecond: Math.round(kind('post').ok / mixed.load.seconds),
          readsPerSecond: Math.round(kind('read').ok / mixed.load.seconds),
          postLatencyMs: kind('post').latency.summary(),
          readLatencyMs: kind('read').latency.summary(),
          loadAverage: mixed.loadAverage,
          meanCores: mixed.cpu.meanCores,
        },
        failures: {
          httpNon2xx: loads.reduce((sum, load) => sum + Object.values(load.byKind).reduce((n, k) => n + k.failed, 0), 0),
          transportErrors: loads.reduce((sum, load) => sum + load.errors, 0),
        },
        timelines,
      },
    };
  } catch (error) {
    say(`!!! ${model} failed: ${(error as Error).stack ?? String(error)}`);
    return { model, outcome: 'failed', reason: (error as Error).message.split('\n')[0]! };
  } finally {
    await deployment.dispose();
  }
}

const runs: ModelRun[] = [];
for (const model of models) {
  const run = await runModel(model);
  runs.push(run);
  if (run.outcome === 'measured') {
    const { work, mixed } = run.figures;
    say(`${model}: total work ${totalWork(work.total)} (${work.total.entriesWritten} entries written, ${work.total.feedsQueried} feeds queried), posts ${mixed.postsPerSecond}/s, reads ${mixed.readsPerSecond}/s, read p99 ${mixed.readLatencyMs.p99} ms`);
  } else say(`${model}: ${run.outcome}, ${run.reason}`);
}

const comparison: ModelComparison = {
  workload: {
    profile: profile.name,
    mode,
    seed,
    command: `npm run bench:models -- --profile ${profile.name}${values.models === [ALL_PUSH, ALL_PULL, PER_EDGE].join(',') ? '' : ` --models ${models.join(',')}`}${mode === 'standalone' ? '' : ` --mode ${mode}`}${mixedSeconds === chosen.mixedSeconds ? '' : ` --mixed-seconds ${mixedSeconds}`}${seed === 42 ? '' : ` --seed ${seed}`}`,
    readers: profile.readers,
    producers: profile.producers,
    followEdges: workload.edges.length,
    celebrities: workload.celebrities,
    celebrityEdges,
    neverReadShare: profile.neverReadShare,
    warmPosts: profile.warmPosts,
    mixedSeconds: profile.mixedSeconds,
    mixedReaders: profile.mixedReaders,
    mixedPostsPerSecond: profile.mixedPostsPerSecond,
    loadGenerator: http.name,
    checkedReaders: checkedReaders.length,
  },
  machine: { cpus: cpus().length, cpuModel: cpus()[0]?.model.trim() ?? 'unknown', memoryGiB: Math.round(totalmem() / 2 ** 30), node: process.version },
  startedAt: startedAt.toISOString(),
  durationSeconds: Math.round((Date.now() - startedAt.getTime()) / 1000),
  runs,
  goals: checkGoals(profile.name, runs),
};
const report = comparisonMarkdown(comparison);
await mkdir(outDir, { recursive: true });
await writeFile(join(outDir, 'results.json'), `${JSON.stringify(comparison, null, 2)}\n`);
await writeFile(join(outDir, 'report.md'), report);
process.stdout.write(`\n${report}\n`);
say(`done in ${comparison.durationSeconds} s: ${outDir}/report.md, results.json`);
// A run that broke is a failure of the command; a model this build does not have is not.
if (runs.some((run) => run.outcome === 'failed')) process.exitCode = 1;
