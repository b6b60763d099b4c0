/** One start of the standalone on the benchmark's log. */
export interface StartFigures {
  /** From spawning the process to the first 200 from `/readyz`. */
  readyMs: number;
  /** From SIGTERM to the exit (snapshots are written in it). */
  stopMs: number;
  /** The process's own lines about snapshots, catching up and the follower index. */
  lines: string[];
}

export interface RestartResults {
  profile: string;
  seed: number;
  command: string;
  machine: { cpus: number; cpuModel: string; memoryGiB: number; node: string };
  startedAt: string;
  durationSeconds: number;
  log: { events: number; followImports: number; followEdges: number; posts: number; bytes: number; writeSeconds: number };
  fullReplay: StartFigures & { eventsPerSecond: number };
  firstWithSnapshots: StartFigures;
  snapshots: Array<{ file: string; bytes: number }>;
  fromSnapshots: StartFigures;
  fromSnapshotsAndTail: StartFigures & { tailEvents: number };
}

const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;
const n = (value: number) => value.toLocaleString('en');

export function restartMarkdown(r: RestartResults): string {
  const lines = (title: string, figures: StartFigures) => `### ${title}\n\`\`\`\n${figures.lines.join('\n')}\n\`\`\`\n`;
  return `# feedmill restart benchmark: ${r.profile} workload

${r.startedAt}, ${r.durationSeconds} s, on ${r.machine.cpus} × ${r.machine.cpuModel}, ${r.machine.memoryGiB} GiB, Node ${r.machine.node}.
Reproduce: \`${r.command}\` (seed ${r.seed}).

## Log
${n(r.log.events)} events, ${mib(r.log.bytes)}: ${n(r.log.followImports)} follow imports holding ${n(r.log.followEdges)} edges, then ${n(r.log.posts)} posts as the API records them; \`ring\` timelines capped at 800.

## Figures
| start | ready (\`/readyz\` 200) | stop (SIGTERM to exit) |
| --- | --- | --- |
| full replay, \`SNAPSHOTS=off\` | ${n(r.fullReplay.readyMs)} ms (${n(r.fullReplay.eventsPerSecond)} events/s) | ${n(r.fullReplay.stopMs)} ms |
| full replay, snapshots on and none yet (they are written at shutdown) | ${n(r.firstWithSnapshots.readyMs)} ms | ${n(r.firstWithSnapshots.stopMs)} ms |
| from snapshots | ${n(r.fromSnapshots.readyMs)} ms | ${n(r.fromSnapshots.stopMs)} ms |
| from snapshots and a tail of ${n(r.fromSnapshotsAndTail.tailEvents)} posts | ${n(r.fromSnapshotsAndTail.readyMs)} ms | ${n(r.fromSnapshotsAndTail.stopMs)} ms |

Snapshots: ${r.snapshots.map((s) => `\`${s.file}\` ${mib(s.bytes)}`).join(', ') || 'none'}.

## What the process logged
${lines('full replay', r.fullReplay)}
${lines('first start with snapshots on', r.firstWithSnapshots)}
${lines('from snapshots', r.fromSnapshots)}
${lines('from snapshots and the tail', r.fromSnapshotsAndTail)}`;
}
