import { cpus, totalmem } from 'node:os';
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs, stripVTControlCharacters } from 'node:util';
import pidusage from 'pidusage';
import { FeedmillClient } from '@feedmill/client';
import { timelineModels, type TimelineModel } from '@feedmill/contracts';
import { freePort, startApp, waitFor } from '@feedmill/harness';
import { round } from './deployment.js';
import { profiles, type Profile } from './profiles.js';
import { progressBar, say } from './progress.js';
import { appendWorkloadPosts, writeWorkloadLog } from './restart-log.js';
import { restartMarkdown, type RestartResults, type StartFigures } from './restart-report.js';
import { Workload } from './workload.js';

/**
 * The restart benchmark: a log of about a million events of a profile's workload shape, and
 * how long a standalone takes to answer `/readyz` 200 on it, replaying everything
 * (`SNAPSHOTS=off`), from its snapshots, and from its snapshots with a tail of newer posts.
 */
const { values } = parseArgs({
  options: {
    profile: { type: 'string', default: 'medium' },
    events: { type: 'string', default: '1000000' },
    model: { type: 'string', default: 'ring' },
    tail: { type: 'string', default: '20000' },
    seed: { type: 'string', default: '42' },
    out: { type: 'string' },
    'unsealed-too': { type: 'boolean', default: false },
  },
});
const profile: Profile | undefined = profiles[values.profile as Profile['name']];
if (!profile) throw new Error(`--profile must be one of ${Object.keys(profiles).join(', ')}`);
const events = Number(values.events);
const tail = Number(values.tail);
if (!Number.isInteger(events) || events < 1) throw new Error('--events must be a whole number of events');
if (!Number.isInteger(tail) || tail < 0) throw new Error('--tail must be a whole number of posts, 0 or more');
const model = values.model as TimelineModel;
if (!(timelineModels as readonly string[]).includes(model)) throw new Error(`--model must be one of ${timelineModels.join(', ')}`);
const seed = Number(values.seed);
const outDir = resolve(values.out ?? `bench-results/restart-${profile.name}-${model}`);
/** A full replay of a large log at the speed before snapshots: give it time. */
const READY_TIMEOUT_MS = 30 * 60_000;

const startedAt = new Date();
const dir = await mkdtemp(join(tmpdir(), 'feedmill-restart-'));
const dataDir = join(dir, 'data');
const configPath = join(dir, 'feeds.json');
await writeFile(configPath, JSON.stringify({ groups: { user: { kind: 'producer' }, timeline: { kind: 'timeline', model, cap: 800 } } }));
const port = await freePort();

/** Starts the standalone on the log in `dir`, times it to a 200 from `/readyz`, then stops it with SIGTERM and times that. */
async function timedStart(env: Record<string, string>, dir = dataDir): Promise<StartFigures & { output: string }> {
  const started = performance.now();
  const app = startApp('standalone', { PORT: String(port), FEEDMILL_DATA_DIR: dir, FEED_CONFIG: configPath, LOG_LEVEL: 'log', ...env });
  const probe = new FeedmillClient({ baseUrl: `http://127.0.0.1:${port}` });
  try {
    await waitFor(
      async () => {
        if (app.child.exitCode !== null) throw new Error(`the standalone exited:\n${app.output()}`);
        const readiness = await probe.readiness().catch(() => undefined);
        return readiness?.ready ? true : undefined;
      },
      { timeoutMs: READY_TIMEOUT_MS, intervalMs: 10, what: '/readyz' },
    );
  } catch (error) {
    await app.kill();
    throw error;
  }
  const readyMs = performance.now() - started;
  // CPU time the process used until then, every thread counted (the collector's too): on a
  // machine shared with other work, what the start cost, apart from what it waited for.
  const { ctime } = await pidusage(app.child.pid!);
  pidusage.clear();
  const stopping = performance.now();
  await app.stop();
  const stopMs = performance.now() - stopping;
  const output = stripVTControlCharacters(app.output());
  const lines = output.split('\n').map(readableLogLine).filter((line) => /restored|wrote|skipped|caught up|follower index/.test(line));
  return { readyMs: Math.round(readyMs), cpuMs: Math.round(ctime), stopMs: Math.round(stopMs), lines, output };
}

/** A JSON log line as `[context] message`; any other line as it is. */
function readableLogLine(line: string): string {
  try {
    const entry = JSON.parse(line) as { context?: string; msg?: string };
    return `[${entry.context ?? '-'}] ${entry.msg ?? ''}`;
  } catch {
    return line.trim();
  }
}

async function snapshotFiles(): Promise<Array<{ file: string; bytes: number }>> {
  const snapshots = join(dataDir, 'snapshots');
  const files = await readdir(snapshots).catch(() => []);
  return Promise.all(files.sort().map(async (file) => ({ file, bytes: (await stat(join(snapshots, file))).size })));
}

try {
  say(`restart benchmark: ${events.toLocaleString('en')} events of the ${profile.name} workload, ${model} timelines, then ${tail.toLocaleString('en')} more posts -> ${outDir}`);
  const workload = new Workload(profile, seed);
  const bar = progressBar('writing the log', events);
  let started = performance.now();
  const written = await writeWorkloadLog(dataDir, workload, events, (head) => bar.update(head));
  bar.stop();
  const writeSeconds = (performance.now() - started) / 1000;
  const logBytes = (await stat(join(dataDir, 'events.log'))).size;
  say(`log: ${written.head.toLocaleString('en')} events (${written.followImports} follow imports of ${workload.edges.length.toLocaleString('en')} edges, ${written.posts.toLocaleString('en')} posts), ${round(logBytes / 2 ** 20)} MiB, written in ${round(writeSeconds)} s`);

  // What a start costs with nothing to replay: loading the code, Nest, the HTTP server.
  const empty = await timedStart({ SNAPSHOTS: 'off' }, join(dir, 'empty'));
  say(`empty log: ready in ${empty.readyMs} ms (${empty.cpuMs} ms of CPU)`);

  say('full replay, SNAPSHOTS=off');
  const fullReplay = await timedStart({ SNAPSHOTS: 'off' });
  const replayPerSecond = Math.round(written.head / (Math.max(1, fullReplay.readyMs - empty.readyMs) / 1000));
  say(`  ready in ${fullReplay.readyMs} ms (${fullReplay.cpuMs} ms of CPU): the replay ${replayPerSecond.toLocaleString('en')} events/s`);

  // Sealing's cost to a replay: the same workload written with content in clear, replayed
  // after and before another sealed replay, so that a drift of the machine shows.
  let unsealed: RestartResults['unsealedReplay'];
  if (values['unsealed-too']) {
    const plainDir = join(dir, 'unsealed');
    say('writing the same log with content in clear (as before sealing)');
    const plain = await writeWorkloadLog(plainDir, new Workload(profile, seed), events, () => undefined, false);
    const plainBytes = (await stat(join(plainDir, 'events.log'))).size;
    const replays: Array<{ sealed: boolean; readyMs: number; cpuMs: number }> = [];
    for (const sealed of [false, true, false]) {
      const start = await timedStart({ SNAPSHOTS: 'off' }, sealed ? dataDir : plainDir);
      replays.push({ sealed, readyMs: start.readyMs, cpuMs: start.cpuMs });
      say(`  full replay, ${sealed ? 'sealed' : 'in clear'}: ready in ${start.readyMs} ms (${start.cpuMs} ms of CPU)`);
    }
    await rm(plainDir, { recursive: true, force: true });
    const perSecond = (readyMs: number) => Math.round(plain.head / (Math.max(1, readyMs - empty.readyMs) / 1000));
    unsealed = { events: plain.head, bytes: plainBytes, replays: replays.map((replay) => ({ ...replay, eventsPerSecond: perSecond(replay.readyMs) })) };
  }

  say('full replay with snapshots on and none yet; writes them at shutdown');
  const firstWithSnapshots = await timedStart({ SNAPSHOTS: 'on' });
  const files = await snapshotFiles();
  say(`  ready in ${firstWithSnapshots.readyMs} ms, stopped (snapshots written) in ${firstWithSnapshots.stopMs} ms: ${files.map((f) => `${f.file} ${round(f.bytes / 2 ** 20)} MiB`).join(', ')}`);

  say('start from the snapshots');
  const fromSnapshots = await timedStart({ SNAPSHOTS: 'on' });
  say(`  ready in ${fromSnapshots.readyMs} ms (${fromSnapshots.cpuMs} ms of CPU)`);

  started = performance.now();
  const headWithTail = tail > 0 ? await appendWorkloadPosts(dataDir, workload, tail) : written.head;
  say(`appended ${tail.toLocaleString('en')} posts in ${round((performance.now() - started) / 1000)} s; start from the snapshots and that tail`);
  const fromSnapshotsAndTail = await timedStart({ SNAPSHOTS: 'on' });
  say(`  ready in ${fromSnapshotsAndTail.readyMs} ms (${fromSnapshotsAndTail.cpuMs} ms of CPU)`);

  const strip = ({ output: _output, ...figures }: StartFigures & { output: string }): StartFigures => figures;
  const results: RestartResults = {
    profile: profile.name,
    model,
    seed,
    command: `npm run bench:restart -- --profile ${profile.name} --events ${events} --tail ${tail}${model === 'ring' ? '' : ` --model ${model}`}${values.seed === '42' ? '' : ` --seed ${seed}`}${values['unsealed-too'] ? ' --unsealed-too' : ''}`,
    machine: { cpus: cpus().length, cpuModel: cpus()[0]?.model.trim() ?? 'unknown', memoryGiB: Math.round(totalmem() / 2 ** 30), node: process.version },
    startedAt: startedAt.toISOString(),
    durationSeconds: Math.round((Date.now() - startedAt.getTime()) / 1000),
    log: { events: written.head, followImports: written.followImports, followEdges: workload.edges.length, posts: written.posts, bytes: logBytes, writeSeconds: round(writeSeconds, 1) },
    emptyStart: strip(empty),
    fullReplay: { ...strip(fullReplay), eventsPerSecond: replayPerSecond },
    firstWithSnapshots: strip(firstWithSnapshots),
    snapshots: files,
    fromSnapshots: strip(fromSnapshots),
    fromSnapshotsAndTail: { ...strip(fromSnapshotsAndTail), tailEvents: headWithTail - written.head },
    unsealedReplay: unsealed,
  };
  await mkdir(outDir, { recursive: true });
  await writeFile(join(outDir, 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
  await writeFile(join(outDir, 'report.md'), restartMarkdown(results));
  say(`done in ${results.durationSeconds} s: ${outDir}/report.md, results.json`);
} finally {
  await rm(dir, { recursive: true, force: true });
}
