import type { LatencySummary } from './latency.js';
import type { TimelineSetCheck } from './timeline-sets.js';
import { totalWork, type WorkByPhase } from './timeline-work.js';

/**
 * The timeline models compared on one workload: per model, the timeline service's work and
 * what readers and posters got; and the goals per-edge push/pull must meet against the
 * pure strategies.
 */
export const ALL_PUSH = 'ring';
export const ALL_PULL = 'pull';
export const PER_EDGE = 'hybrid';

/** What one model's run measured. */
export interface ModelFigures {
  work: WorkByPhase;
  warmUp: {
    posts: number;
    /** Timeline entries fan-out delivered for them. */
    deliveries: number;
    /** From the first post to fan-out having applied the last. */
    secondsUntilDelivered: number;
    postsPerSecondUntilDelivered: number;
  };
  mixed: {
    seconds: number;
    posts: number;
    reads: number;
    postsPerSecond: number;
    readsPerSecond: number;
    postLatencyMs: LatencySummary;
    readLatencyMs: LatencySummary;
    /** The machine's 1-minute load average as the phase began. */
    loadAverage: number;
    /** Cores the deployment used on average in the phase. */
    meanCores: number;
  };
  failures: { httpNon2xx: number; transportErrors: number };
  /** Sampled readers' timelines after the warm-up against the first model's; null for the first model. */
  timelines: (TimelineSetCheck & { reference: string }) | null;
}

export type ModelRun =
  | { model: string; outcome: 'measured'; figures: ModelFigures }
  /** The deployment refused the model (a build that does not have it): nothing was measured. */
  | { model: string; outcome: 'skipped'; reason: string }
  /** The run began and broke. */
  | { model: string; outcome: 'failed'; reason: string };

export interface GoalCheck {
  goal: string;
  status: 'met' | 'not met' | 'not checked';
  detail: string;
}

type Measured = Extract<ModelRun, { outcome: 'measured' }>;

/** Why a run's figures cannot be held against another's, or undefined when they can. */
function unusable(run: ModelRun | undefined, model: string): string | undefined {
  if (run === undefined) return `${model} was not run`;
  if (run.outcome !== 'measured') return `${model} was ${run.outcome}: ${run.reason}`;
  const { failures, timelines } = run.figures;
  const failed = failures.httpNon2xx + failures.transportErrors;
  if (failed > 0) return `${model}'s run had ${failed} failed requests`;
  if (timelines && timelines.mismatches > 0) return `${model}'s timelines differ from ${timelines.reference}'s for ${timelines.mismatches} readers`;
  return undefined;
}

const count = (n: number) => n.toLocaleString('en');
const ratio = (a: number, b: number) => (b === 0 ? 'n/a' : `${(a / b).toFixed(2)}×`);

/**
 * The goals of per-edge push/pull against the pure strategies, on this run: less total work
 * than all push and than all pull; on the celebrity profile, at most a third of all push's;
 * and a read p99 within twice all push's.
 */
export function checkGoals(profile: string, runs: readonly ModelRun[]): GoalCheck[] {
  const find = (model: string) => runs.find((run) => run.model === model);
  const against = (other: string, goal: string, test: (ours: Measured, theirs: Measured) => { met: boolean; detail: string }): GoalCheck => {
    const ours = find(PER_EDGE);
    const theirs = find(other);
    const why = unusable(ours, PER_EDGE) ?? unusable(theirs, other);
    if (why !== undefined) return { goal, status: 'not checked', detail: why };
    const { met, detail } = test(ours as Measured, theirs as Measured);
    return { goal, status: met ? 'met' : 'not met', detail };
  };
  const work = (run: Measured) => totalWork(run.figures.work.total);
  const lessWork = (other: string, label: string) =>
    against(other, `${PER_EDGE} does less total work than ${other} (${label})`, (ours, theirs) => ({
      met: work(ours) < work(theirs),
      detail: `${count(work(ours))} against ${count(work(theirs))} (${ratio(work(ours), work(theirs))})`,
    }));
  const goals = [lessWork(ALL_PUSH, 'all push'), lessWork(ALL_PULL, 'all pull')];
  if (profile === 'celebrity') {
    goals.push(
      against(ALL_PUSH, `${PER_EDGE} does at most a third of ${ALL_PUSH}'s total work`, (ours, theirs) => ({
        met: 3 * work(ours) <= work(theirs),
        detail: `${ratio(work(ours), work(theirs))} of it, at most 0.33× wanted`,
      })),
    );
  }
  goals.push(
    against(ALL_PUSH, `${PER_EDGE}'s read p99 is at most twice ${ALL_PUSH}'s`, (ours, theirs) => {
      const p99 = ours.figures.mixed.readLatencyMs.p99;
      const theirP99 = theirs.figures.mixed.readLatencyMs.p99;
      return { met: p99 <= 2 * theirP99, detail: `${p99} ms against ${theirP99} ms (${ratio(p99, theirP99)}, at most 2× wanted)` };
    }),
  );
  return goals;
}

/** The workload every model ran, as the report states it. */
export interface ComparedWorkload {
  profile: string;
  mode: string;
  seed: number;
  command: string;
  readers: number;
  producers: number;
  followEdges: number;
  celebrities: number;
  celebrityEdges: number;
  neverReadShare: number;
  warmPosts: number;
  mixedSeconds: number;
  mixedReaders: number;
  mixedPostsPerSecond: number;
  loadGenerator: string;
  /** Sampled readers whose timelines are compared across models after the warm-up. */
  checkedReaders: number;
}

export interface ModelComparison {
  workload: ComparedWorkload;
  machine: { cpus: number; cpuModel: string; memoryGiB: number; node: string };
  startedAt: string;
  durationSeconds: number;
  runs: ModelRun[];
  goals: GoalCheck[];
}

const workCells = (w: { entriesWritten: number; feedsQueried: number }) => `${count(totalWork(w))} = ${count(w.entriesWritten)} + ${count(w.feedsQueried)}`;

function row(run: ModelRun, reference: Measured | undefined): string {
  if (run.outcome !== 'measured') return `| ${run.model} | ${run.outcome} | | | | | | | | |`;
  const { work, mixed, warmUp, failures } = run.figures;
  const total = totalWork(work.total);
  const versus = reference === undefined ? 'n/a' : ratio(total, totalWork(reference.figures.work.total));
  return `| ${run.model} | ${count(total)} | ${versus} | ${count(work.total.entriesWritten)} | ${count(work.total.feedsQueried)} | ${count(mixed.postsPerSecond)} | ${count(mixed.readsPerSecond)} | ${mixed.readLatencyMs.p50} / ${mixed.readLatencyMs.p99} | ${count(warmUp.postsPerSecondUntilDelivered)} | ${failures.httpNon2xx + failures.transportErrors} |`;
}

function phaseRow(run: Measured): string {
  const { work, mixed } = run.figures;
  const requests = mixed.reads + mixed.posts;
  const perRequest = requests === 0 ? 'n/a' : (totalWork(work.mixed) / requests).toFixed(1);
  return `| ${run.model} | ${workCells(work.beforeMixed)} | ${workCells(work.mixed)} | ${perRequest} | ${mixed.loadAverage} | ${mixed.meanCores} |`;
}

function timelinesLine(run: Measured): string | undefined {
  const check = run.figures.timelines;
  if (!check) return undefined;
  const verdict = check.mismatches === 0 ? `the same as ${check.reference}'s for all ${check.matches} readers compared` : `**different from ${check.reference}'s for ${check.mismatches} readers**, the same for ${check.matches}`;
  const examples = check.examples.map((e) => `\n  - ${e}`).join('');
  return `- ${run.model}: ${verdict}, ${count(check.entries)} entries${examples}`;
}

/** The report: one table of the models, the work by phase, the timelines' check, and the goals, each met or not. */
export function comparisonMarkdown(c: ModelComparison): string {
  const w = c.workload;
  const measured = c.runs.filter((run): run is Measured => run.outcome === 'measured');
  const allPush = measured.find((run) => run.model === ALL_PUSH);
  const notMeasured = c.runs.filter((run) => run.outcome !== 'measured').map((run) => `- ${run.model} ${run.outcome}: ${run.reason}`);
  const timelines = measured.map(timelinesLine).filter((line) => line !== undefined);
  const celebrities =
    w.celebrities === 0 ? '' : `, ${w.celebrities} of them celebrities with ${count(w.celebrityEdges)} of the edges (${Math.round((100 * w.celebrityEdges) / w.followEdges)}%)`;
  return `# feedmill timeline models: ${w.profile}, ${w.mode}

${c.startedAt}, ${c.durationSeconds} s, on ${c.machine.cpus} × ${c.machine.cpuModel}, ${c.machine.memoryGiB} GiB, Node ${c.machine.node}.
Reproduce: \`${w.command}\` (seed ${w.seed}).

Each model ran the same workload on a fresh deployment, one after the other: ${count(w.readers)} readers (${Math.round(w.neverReadShare * 100)}% never read), ${count(w.producers)} producers${celebrities}, ${count(w.followEdges)} follow edges imported, ${count(w.warmPosts)} posts over the HTTP API until fan-out delivered them, then a ${w.mixedSeconds} s mixed phase of ${w.mixedReaders} readers reading as fast as they are answered beside ${w.mixedPostsPerSecond} posts per second, paced. HTTP load from ${w.loadGenerator}. No post-to-visible probes, no in-process figures, no Redis baseline: \`npm run bench\` measures those, one model at a time.

## Models
| model | total work | vs ${ALL_PUSH} | entries written | feeds queried | posts/s (mixed) | reads/s (mixed) | read p50 / p99 ms | warm-up posts/s until delivered | failed requests |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
${c.runs.map((run) => row(run, allPush)).join('\n')}
${notMeasured.length === 0 ? '' : `\n${notMeasured.join('\n')}\n`}
Total work is what the timeline service did over the whole run: timeline entries its store wrote (fan-out deliveries, follow backfills, cache builds) plus the feeds its pull paths queried at read time, summed over reads; both from its status counters (\`GET /readyz\`), read once fan-out had applied everything; the reads of the timelines' check between the phases are not counted. Readers read as fast as they are answered, so a model whose reads cost more also makes fewer of them: the mixed phase's work per request below puts the models on the same footing.

## Work by phase
| model | before the mixed phase: written + queried | mixed phase: written + queried | mixed-phase work per request | load average at the mixed phase (${c.machine.cpus} cores) | cores used (mixed) |
| --- | --- | --- | --- | --- | --- |
${measured.map(phaseRow).join('\n')}

## Same timelines
After the warm-up, ${w.checkedReaders} readers spread over all: each one's whole timeline, scrolled with the API's cursors and compared as a set by author and object (posts reach each deployment in its own interleaving), against the first model's.
${timelines.length === 0 ? 'Nothing to compare: fewer than two models were measured.' : timelines.join('\n')}

## Goals
${c.goals.map((g) => `- **${g.status}**: ${g.goal}: ${g.detail}`).join('\n')}
`;
}
