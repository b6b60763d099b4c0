import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { basename, resolve } from 'node:path';
import { FeedmillClient } from '@feedmill/client';
import { freePort } from './free-port.js';
import { waitFor } from './wait-for.js';

/** The repository root: tests run from it. */
export const repoRoot = resolve(process.cwd());

export interface RunningProcess {
  /** The app's name, with a number after the first of several (`fanout`, `fanout-2`). */
  name: string;
  child: ChildProcess;
  output(): string;
  /** SIGTERM, and wait for the exit. */
  stop(): Promise<void>;
  /** SIGKILL, and wait for the exit: a crash. */
  kill(): Promise<void>;
}

/**
 * Starts a built app (`apps/<app>/dist/main.js`) as its own Node process, named `name`, with
 * `nodeArgs` before the script (such as `--cpu-prof`, which `NODE_OPTIONS` does not take).
 */
export function startApp(app: string, env: Record<string, string>, name = app, nodeArgs: readonly string[] = []): RunningProcess {
  const child = spawn(process.execPath, [...nodeArgs, resolve(repoRoot, 'apps', app, 'dist', 'main.js')], {
    // A short shutdown grace: test requests are quick.
    env: { ...process.env, LOG_LEVEL: 'warn', SHUTDOWN_GRACE_MS: '250', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-200_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const signal = async (sig: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(sig);
    await exited;
  };
  return { name, child, output: () => output, stop: () => signal('SIGTERM'), kill: () => signal('SIGKILL') };
}

/**
 * Waits until `GET /readyz` answers 200, or fails with the processes' output after
 * stopping them, so that a failed start leaves nothing running.
 */
export async function waitUntilReady(baseUrl: string, processes: RunningProcess[], timeoutMs = 30_000): Promise<void> {
  const probe = new FeedmillClient({ baseUrl });
  try {
    await waitFor(
      async () => {
        for (const p of processes) {
          if (p.child.exitCode !== null || p.child.signalCode !== null) throw new Error(`${p.name} exited early`);
        }
        const readiness = await probe.readiness().catch(() => undefined);
        return readiness?.ready ? true : undefined;
      },
      { timeoutMs, intervalMs: 100, what: `${baseUrl}/readyz` },
    );
  } catch (error) {
    const logs = processes.map((p) => `--- ${p.name}\n${p.output()}`).join('\n');
    await Promise.all(processes.map((p) => p.kill()));
    throw new Error(`${(error as Error).message}\n${logs}`);
  }
}

export interface Deployment {
  baseUrl: string;
  processes: RunningProcess[];
  stop(): Promise<void>;
}

/**
 * When the tests run on a shared MongoDB or KurrentDB (`STORE=mongodb`, `LOG=kurrentdb` in
 * their environment, as CI runs the scenarios), a database and a stream namespace of the
 * deployment's own, named after `key`, so that deployments do not read each other's data;
 * the same `key` (a restart on the same data directory) finds the same data.
 */
function sharedServersApart(key: string): Record<string, string> {
  const name = key.replace(/[^A-Za-z0-9_-]/g, '_').slice(-40);
  return {
    ...(process.env['STORE'] === 'mongodb' && { MONGODB_DB: `feedmill_${name}` }),
    ...(process.env['LOG'] === 'kurrentdb' && { KURRENTDB_NAMESPACE: `${name}-` }),
  };
}

/** The embedded default: one process, file log in `dataDir`. */
export async function startStandalone(options: { dataDir: string; env?: Record<string, string>; port?: number; readyTimeoutMs?: number; nodeArgs?: readonly string[] }): Promise<Deployment> {
  const port = options.port ?? (await freePort());
  const env = { PORT: String(port), FEEDMILL_DATA_DIR: options.dataDir, ...sharedServersApart(basename(options.dataDir)), ...options.env };
  const app = startApp('standalone', env, 'standalone', options.nodeArgs);
  const baseUrl = `http://127.0.0.1:${port}`;
  await waitUntilReady(baseUrl, [app], options.readyTimeoutMs);
  return { baseUrl, processes: [app], stop: () => app.stop() };
}

export interface ClusterOptions {
  natsUrl: string;
  stream: string;
  env?: Record<string, string>;
  readyTimeoutMs?: number;
  /** How many fan-out processes. @defaultValue 1 */
  fanoutWorkers?: number;
  /** How many partitions timelines are split into (`TIMELINE_PARTITIONS`). @defaultValue 1 */
  timelinePartitions?: number;
  /** How many timeline processes share them. @defaultValue 1 */
  timelineReplicas?: number;
  /**
   * How the timeline processes share the partitions: each given its place
   * (`TIMELINE_REPLICA_INDEX`), or by leases they claim. @defaultValue 'fixed'
   */
  timelineOwnership?: 'fixed' | 'leases';
  /** Node's options for every process, before the script (such as `--cpu-prof`). */
  nodeArgs?: readonly string[];
}

/**
 * Five processes over NATS, the log on JetStream in its own stream; with `fanoutWorkers`
 * (default 1), that many fan-out processes, and with `timelineReplicas`, that many timeline
 * processes (`timeline-0`, `timeline-1`, ...) sharing the `timelinePartitions` as
 * `timelineOwnership` says.
 */
export interface ClusterDeployment extends Deployment {
  /** Starts the process named `name` again, with its environment, in its place in `processes` (after it was killed or stopped). */
  restart(name: string): RunningProcess;
}

export async function startCluster(options: ClusterOptions): Promise<ClusterDeployment> {
  const port = await freePort();
  const partitions = options.timelinePartitions ?? 1;
  const replicas = options.timelineReplicas ?? 1;
  const env = { NATS_URL: options.natsUrl, LOG: 'jetstream', ...sharedServersApart(options.stream), JETSTREAM_STREAM: options.stream, TIMELINE_PARTITIONS: String(partitions), TIMELINE_REPLICAS: String(replicas), ...options.env };
  const starts = new Map<string, () => RunningProcess>();
  const add = (app: string, appEnv: Record<string, string>, name = app) => starts.set(name, () => startApp(app, appEnv, name, options.nodeArgs));
  for (const name of ['content', 'graph']) add(name, env);
  const place = (i: number): Record<string, string> => (options.timelineOwnership === 'leases' ? {} : { TIMELINE_REPLICA_INDEX: String(i) });
  for (let i = 0; i < replicas; i++) {
    if (replicas === 1) add('timeline', env);
    else add('timeline', { ...env, ...place(i) }, `timeline-${i}`);
  }
  for (let i = 1; i <= (options.fanoutWorkers ?? 1); i++) add('fanout', env, i === 1 ? 'fanout' : `fanout-${i}`);
  add('gateway', { ...env, PORT: String(port) });
  const processes = [...starts.values()].map((start) => start());
  const baseUrl = `http://127.0.0.1:${port}`;
  await waitUntilReady(baseUrl, processes, options.readyTimeoutMs);
  return {
    baseUrl,
    processes,
    stop: async () => void (await Promise.all(processes.map((p) => p.stop()))),
    restart(name) {
      const at = processes.findIndex((p) => p.name === name);
      if (at < 0 || !starts.has(name)) throw new Error(`no process named ${name}`);
      return (processes[at] = starts.get(name)!());
    },
  };
}

/** The processes `pid` started (the standalone's HTTP workers, say). */
export function childProcessesOf(pid: number): number[] {
  try {
    return execFileSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' }).split('\n').filter(Boolean).map(Number);
  } catch {
    return []; // pgrep exits 1 when it finds none
  }
}
