/** One start of the standalone on the benchmark's log. */
export interface StartFigures {
  /** From spawning the process to the first 200 from `/readyz`. */
  readyMs: number;
  /** CPU time the process used until then, all its threads. */
  cpuMs: number;
  /** From SIGTERM to the exit (snapshots are written in it). */
  stopMs: number;
  /** The process's own lines about snapshots, catching up and the follower index. */
  lines: string[];
}

export interface RestartResults {
  profile: string;
  model: string;
  seed: number;
  command: string;
  machine: { cpus: number; cpuModel: string; memoryGiB: number; node: string };
  startedAt: string;
  durationSeconds: number;
  log: { events: number; followImports: number; followEdges: number; posts: number; bytes: number; writeSeconds: number };
  /** A start on an empty log: what every start costs before it replays or restores anything. */
  emptyStart: StartFigures;
  /** `eventsPerSecond`: the log's events over the time the start took beyond an empty one's. */
  fullReplay: StartFigures & { eventsPerSecond: number };
  firstWithSnapshots: StartFigures;
  snapshots: Array<{ file: string; bytes: number }>;
  fromSnapshots: StartFigures;
  fromSnapshotsAndTail: StartFigures & { tailEvents: number };
  /** With `--unsealed-too`: full replays of the same workload written in clear, beside one more of the sealed log, in the order run. */
  unsealedReplay?: { events: number; bytes: number; replays: Array<{ sealed: boolean; readyMs: number; cpuMs: number; eventsPerSecond: number }> };
}

const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
const n = (value: number) => value.toLocaleString('en');

export function restartMarkdown(r: RestartResults): string {
  const lines = (title: string, figures: StartFigures) => `### ${title}\n\`\`\`\n${figures.lines.join('\n')}\n\`\`\`\n`;
  return `# feedmill restart benchmark: ${r.profile} workload, ${r.model} timelines

${r.startedAt}, ${r.durationSeconds} s, on ${r.machine.cpus} × ${r.machine.cpuModel}, ${r.machine.memoryGiB} GiB, Node ${r.machine.node}.
Reproduce: \`${r.command}\` (seed ${r.seed}).

## Log
${n(r.log.events)} events, ${mib(r.log.bytes)}: ${n(r.log.followImports)} follow imports holding ${n(r.log.followEdges)} edges, then ${n(r.log.posts)} posts as the API records them; \`${r.model}\` timelines capped at 800.

## Figures
| start | ready (\`/readyz\` 200) | CPU until ready (all threads) | stop (SIGTERM to exit) |
| --- | --- | --- | --- |
| empty log (loading the code, Nest, the HTTP server) | ${n(r.emptyStart.readyMs)} ms | ${n(r.emptyStart.cpuMs)} ms | ${n(r.emptyStart.stopMs)} ms |
| full replay, \`SNAPSHOTS=off\` | ${n(r.fullReplay.readyMs)} ms (replay: ${n(r.fullReplay.eventsPerSecond)} events/s beyond an empty start) | ${n(r.fullReplay.cpuMs)} ms | ${n(r.fullReplay.stopMs)} ms |
| full replay, snapshots on and none yet (they are written at shutdown) | ${n(r.firstWithSnapshots.readyMs)} ms | ${n(r.firstWithSnapshots.cpuMs)} ms | ${n(r.firstWithSnapshots.stopMs)} ms |
| from snapshots | ${n(r.fromSnapshots.readyMs)} ms | ${n(r.fromSnapshots.cpuMs)} ms | ${n(r.fromSnapshots.stopMs)} ms |
| from snapshots and a tail of ${n(r.fromSnapshotsAndTail.tailEvents)} posts | ${n(r.fromSnapshotsAndTail.readyMs)} ms | ${n(r.fromSnapshotsAndTail.cpuMs)} ms | ${n(r.fromSnapshotsAndTail.stopMs)} ms |

${unsealedMarkdown(r)}Snapshots: ${r.snapshots.map((s) => `\`${s.file}\` ${mib(s.bytes)}`).join(', ') || 'none'}.

## What the process logged
${lines('full replay', r.fullReplay)}
${lines('first start with snapshots on', r.firstWithSnapshots)}
${lines('from snapshots', r.fromSnapshots)}
${lines('from snapshots and the tail', r.fromSnapshotsAndTail)}`;
}

/** What sealing costs a full replay: the same workload in clear and sealed, run by turns. */
function unsealedMarkdown(r: RestartResults): string {
  const u = r.unsealedReplay;
  if (!u) return '';
  const rows = u.replays.map((replay) => `| ${replay.sealed ? 'sealed' : 'in clear'} | ${n(replay.readyMs)} ms | ${n(replay.eventsPerSecond)} events/s | ${n(replay.cpuMs)} ms |`);
  return `### Sealing's cost to a full replay (\`SNAPSHOTS=off\`)
The same workload written with content in clear (${mib(u.bytes)}, as logs before sealing hold it), replayed by turns with the sealed log (${mib(r.log.bytes)}):

| log | ready | replay | CPU until ready |
| --- | --- | --- | --- |
${rows.join('\n')}

`;
}
