import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pidusage from 'pidusage';
import { FeedmillClient } from '@feedmill/client';
import type { ServiceStatus, TimelineModel } from '@feedmill/contracts';
import { connectSealedJetStreamLog, openSealedFileLog, type EventLog } from '@feedmill/event-log';
import { childProcessesOf, freePort, startCluster, startNatsServer, startStandalone, waitFor, type Deployment, type NatsServerHandle } from '@feedmill/harness';
import type { TimelineWork } from './timeline-work.js';

export type Mode = 'standalone' | 'cluster';

/** A restart rebuilds everything before it is ready: give it as long as a rebuild takes. */
const READY_TIMEOUT_MS = 30 * 60_000;

/**
 * The system under test, in either deployment, on this machine: started fresh, restarted
 * on the same log to measure a rebuild, and read back in-process afterwards.
 */
export class BenchDeployment {
  private running?: Deployment;
  private nats?: NatsServerHandle;
  private dataDir?: string;
  private port = 0;
  private readonly stream = `BENCH${Date.now()}`;

  private configDir?: string;

  constructor(
    readonly mode: Mode,
    readonly model: TimelineModel,
    /** More environment for its processes (the standalone's `HTTP_WORKERS`). */
    private readonly extraEnv: Record<string, string> = {},
  ) {}

  /** The feed config of the run: the default groups, with the timeline model under test. */
  private async env(): Promise<Record<string, string>> {
    this.configDir ??= await mkdtemp(join(tmpdir(), 'feedmill-bench-config-'));
    const path = join(this.configDir, 'feeds.json');
    await writeFile(path, JSON.stringify({ groups: { user: { kind: 'producer' }, timeline: { kind: 'timeline', model: this.model, cap: 800 } } }));
    return { ...this.extraEnv, FEED_CONFIG: path };
  }

  get baseUrl(): string {
    return this.running!.baseUrl;
  }

  /** The NATS server of a cluster deployment; undefined for standalone. */
  get natsUrl(): string | undefined {
    return this.nats?.url;
  }

  /** Every process of the deployment: those started, and those they started (the standalone's HTTP workers). */
  get pids(): number[] {
    const started = this.running!.processes.map((p) => p.child.pid).filter((pid) => pid !== undefined);
    return [...started, ...started.flatMap(childProcessesOf)];
  }

  async start(): Promise<void> {
    if (this.mode === 'standalone') {
      this.dataDir ??= await mkdtemp(join(tmpdir(), 'feedmill-bench-'));
      this.port ||= await freePort();
      this.running = await startStandalone({ dataDir: this.dataDir, port: this.port, env: await this.env(), readyTimeoutMs: READY_TIMEOUT_MS });
    } else {
      this.nats ??= await startNatsServer();
      this.running = await startCluster({ natsUrl: this.nats.url, stream: this.stream, env: await this.env(), readyTimeoutMs: READY_TIMEOUT_MS });
    }
  }

  async stop(): Promise<void> {
    await this.running?.stop();
    this.running = undefined;
  }

  /** A client of the deployment's API: its address changes with each start. */
  private api(): FeedmillClient {
    return new FeedmillClient({ baseUrl: this.baseUrl });
  }

  async statuses(): Promise<ServiceStatus[]> {
    return (await this.api().readiness()).services;
  }

  /**
   * Waits until content, graph and fan-out have applied everything the log held when asked
   * (fan-out's status names the head); returns that head.
   */
  async settled(timeoutMs = 600_000): Promise<number> {
    return waitFor(
      async () => {
        const readiness = await this.api().readiness().catch(() => undefined);
        return readiness?.ready ? settledHead(readiness.services) : undefined;
      },
      { timeoutMs, intervalMs: 20, what: 'the deployment to settle' },
    );
  }

  /** The timeline service's counters, since it started; 0 for a counter its version does not have. */
  async timelineCounters(): Promise<{ timelines: number; entries: number; delivered: number } & TimelineWork> {
    const timeline = (await this.statuses()).find((s) => s.service === 'timeline');
    const counters = timeline?.counters ?? {};
    return {
      timelines: counters['timelines'] ?? 0,
      entries: counters['entries'] ?? 0,
      delivered: counters['delivered'] ?? 0,
      entriesWritten: counters['entriesWritten'] ?? 0,
      feedsQueried: counters['feedsQueried'] ?? 0,
    };
  }

  /** Opens the log the deployment wrote, for reading in this process (after {@link stop} for the file log). */
  async openLog(): Promise<EventLog> {
    return this.mode === 'standalone'
      ? openSealedFileLog({ dir: this.dataDir! })
      : connectSealedJetStreamLog({ servers: this.nats!.url, streamName: this.stream });
  }

  async dispose(): Promise<void> {
    await this.stop();
    await this.nats?.stop();
    for (const dir of [this.dataDir, this.configDir]) if (dir) await rm(dir, { recursive: true, force: true });
  }
}

/**
 * The log head the services have all reached (content, graph and fan-out, which delivers to
 * the timelines), as fan-out's status names it; undefined while one stands behind it, or
 * while fan-out names no head (its log did not answer).
 */
export function settledHead(services: readonly ServiceStatus[]): number | undefined {
  const status = new Map(services.map((s) => [s.service, s]));
  const head = status.get('fanout')?.counters?.['logHead'];
  if (head === undefined) return undefined;
  // With HTTP workers holding copies of the timelines, every copy has what fan-out delivered.
  const copiesBehind = status.get('timeline')?.counters?.['replicasBehind'] ?? 0;
  return copiesBehind === 0 && ['content', 'graph', 'fanout'].every((service) => (status.get(service)?.position ?? -1) >= head) ? head : undefined;
}

/**
 * Why a deployment did not start, in one line: the line in which a feedmill process refused
 * its configuration (`feedmill: FEED_CONFIG ...`) when there is one, else the error's first.
 */
export function startFailureReason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const lines = message.split('\n').map((line) => line.trim());
  return lines.find((line) => line.startsWith('feedmill: ')) ?? lines[0] ?? 'no reason given';
}

/** Samples the CPU time of processes: cores busy on average between start and stop. */
export class CpuMeter {
  private readonly samples: number[] = [];
  private timer?: NodeJS.Timeout;

  start(pids: () => number[]): void {
    this.timer = setInterval(() => {
      void pidusage(pids())
        .then((stats) => this.samples.push(Object.values(stats).reduce((sum, s) => sum + s.cpu, 0) / 100))
        .catch(() => undefined);
    }, 1000);
  }

  stop(): { meanCores: number; maxCores: number; samples: number } {
    clearInterval(this.timer);
    pidusage.clear();
    const used = this.samples.slice(1); // the first sample covers the time before start
    const mean = used.reduce((a, b) => a + b, 0) / Math.max(1, used.length);
    return { meanCores: round(mean, 2), maxCores: round(Math.max(0, ...used), 2), samples: used.length };
  }
}

export function round(value: number, digits = 1): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}
