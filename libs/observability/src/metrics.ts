import { collectDefaultMetrics, Counter, Gauge, Histogram, register, type Registry } from 'prom-client';

/**
 * Every metric feedmill exports, in one place, on prom-client's global registry: one process
 * has one set, whichever services it runs (the standalone runs all of them), and the Grafana
 * dashboard's test reads the names from here so that a panel cannot query one that is gone.
 *
 * Metrics that describe a state (timelines held, fan-out's lag, positions) are gauges read
 * when Prometheus scrapes, from the sources the services register ({@link ScrapeSources}):
 * nothing is counted on a write for them. Only request latencies, appends and dead letters
 * are recorded as they happen.
 */

/** Functions a gauge reads on each scrape; a service adds its own while it runs. */
export class ScrapeSources<T> {
  private readonly sources = new Set<() => T | Promise<T>>();

  /** Adds `source`; the returned function removes it (a service that stops). */
  add(source: () => T | Promise<T>): () => void {
    this.sources.add(source);
    return () => void this.sources.delete(source);
  }

  /** Every source's value; one that fails (a store closing under a scrape) is left out. */
  async read(): Promise<T[]> {
    const settled = await Promise.allSettled([...this.sources].map(async (source) => source()));
    return settled.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : []));
  }
}

/** What a timeline process holds, summed over its partitions. */
export interface TimelineHoldings {
  timelines: number;
  entries: number;
  /** Entries delivered since the process started (a running total). */
  delivered: number;
}

/** Where fan-out stands against the log, read on a scrape. */
export interface FanoutLag {
  events: number;
  seconds: number;
}

/** A service's position in the log and readiness, as its status says. */
export interface ServicePosition {
  service: string;
  ready: boolean;
  position: number;
}

/** A projection rebuild's progress, as its status says. */
export interface RebuildProgress {
  projection: string;
  state: 'idle' | 'running' | 'done' | 'failed';
  position: number;
  head: number;
  events: number;
}

const REBUILD_STATES = ['idle', 'running', 'done', 'failed'] as const;

/** Sources the scrape-time gauges read; services add theirs at start. */
export const scrapeSources = {
  timelines: new ScrapeSources<TimelineHoldings>(),
  fanoutLag: new ScrapeSources<FanoutLag>(),
  services: new ScrapeSources<ServicePosition>(),
  rebuilds: new ScrapeSources<RebuildProgress>(),
};

/** Latencies from half a millisecond (a read served from memory) to 10 s (a request near its timeout). */
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** Memo of one scrape's timeline holdings: three metrics read them, the stores count once. */
let holdings: { at: number; value: Promise<TimelineHoldings> } | undefined;
function timelineHoldings(): Promise<TimelineHoldings> {
  if (!holdings || Date.now() - holdings.at > 1_000) {
    const value = scrapeSources.timelines.read().then((all) => all.reduce((sum, h) => ({ timelines: sum.timelines + h.timelines, entries: sum.entries + h.entries, delivered: sum.delivered + h.delivered }), { timelines: 0, entries: 0, delivered: 0 }));
    holdings = { at: Date.now(), value };
  }
  return holdings.value;
}

function defineMetrics(registry: Registry) {
  const registers = [registry];
  return {
    httpRequestDuration: new Histogram({
      name: 'feedmill_http_request_duration_seconds',
      help: 'HTTP requests answered, by method, route pattern and status, and how long they took',
      labelNames: ['method', 'route', 'status'] as const,
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    logAppendDuration: new Histogram({
      name: 'feedmill_log_append_duration_seconds',
      help: 'Appends to the event log, from the call until the log acknowledged them durably',
      labelNames: ['log'] as const,
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    logAppendEvents: new Histogram({
      name: 'feedmill_log_append_events',
      help: 'Events per append to the event log (a bulk import appends many in one)',
      labelNames: ['log'] as const,
      buckets: [1, 2, 5, 10, 50, 100, 500, 1_000, 10_000],
      registers,
    }),
    fileLogCommitAppends: new Histogram({
      name: 'feedmill_file_log_group_commit_appends',
      help: 'Appends that shared one write and fsync of the file log (its group commits)',
      buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1_024, 4_096],
      registers,
    }),
    fileLogCommitDuration: new Histogram({
      name: 'feedmill_file_log_group_commit_duration_seconds',
      help: "How long one group commit's write and fsync of the file log took",
      buckets: LATENCY_BUCKETS,
      registers,
    }),
    fanoutLagEvents: new Gauge({
      name: 'feedmill_fanout_lag_events',
      help: 'Log positions between the log head and where fan-out has delivered (read on scrape, by the planning process)',
      registers,
      async collect() {
        const lags = await scrapeSources.fanoutLag.read();
        this.set(lags.reduce((max, lag) => Math.max(max, lag.events), 0));
      },
    }),
    fanoutLagSeconds: new Gauge({
      name: 'feedmill_fanout_lag_seconds',
      help: 'How long the last event fan-out delivered had waited in the log; 0 once fan-out has caught up',
      registers,
      async collect() {
        const lags = await scrapeSources.fanoutLag.read();
        this.set(lags.reduce((max, lag) => Math.max(max, lag.seconds), 0));
      },
    }),
    deliveries: new Counter({
      name: 'feedmill_timeline_deliveries_total',
      help: 'Timeline entries delivered by fan-out since the process started (read on scrape)',
      registers,
      async collect() {
        // The stores keep the running total; a counter that follows it costs nothing per delivery.
        const { delivered } = await timelineHoldings();
        this.reset();
        this.inc(delivered);
      },
    }),
    deadLetters: new Counter({
      name: 'feedmill_dead_letters_total',
      help: 'Deliveries dead-lettered: an event for every reader (fan-out), or one reader of it (timeline)',
      labelNames: ['kind'] as const,
      registers,
    }),
    timelinesHeld: new Gauge({
      name: 'feedmill_timelines',
      help: 'Timelines this process holds (read on scrape)',
      registers,
      async collect() {
        this.set((await timelineHoldings()).timelines);
      },
    }),
    timelineEntriesHeld: new Gauge({
      name: 'feedmill_timeline_entries',
      help: 'Entries in the timelines this process holds (read on scrape)',
      registers,
      async collect() {
        this.set((await timelineHoldings()).entries);
      },
    }),
    servicePosition: new Gauge({
      name: 'feedmill_service_position',
      help: 'The log position each service in this process has applied (read on scrape)',
      labelNames: ['service'] as const,
      registers,
      async collect() {
        this.reset();
        for (const { service, position } of await scrapeSources.services.read()) this.set({ service }, position);
      },
    }),
    serviceReady: new Gauge({
      name: 'feedmill_service_ready',
      help: '1 when the service has caught up with the log and takes requests, else 0 (read on scrape)',
      labelNames: ['service'] as const,
      registers,
      async collect() {
        this.reset();
        for (const { service, ready } of await scrapeSources.services.read()) this.set({ service }, ready ? 1 : 0);
      },
    }),
    snapshotsWritten: new Counter({
      name: 'feedmill_snapshots_written_total',
      help: 'Snapshots of the memory states written to disk',
      labelNames: ['state'] as const,
      registers,
    }),
    snapshotPosition: new Gauge({
      name: 'feedmill_snapshot_position',
      help: 'Log position the newest snapshot of each state covers (written or restored)',
      labelNames: ['state'] as const,
      registers,
    }),
    snapshotDuration: new Histogram({
      name: 'feedmill_snapshot_duration_seconds',
      help: 'How long a snapshot took, serialized and on disk',
      labelNames: ['state'] as const,
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    }),
    rebuildPosition: new Gauge({
      name: 'feedmill_rebuild_position',
      help: 'Log position a projection rebuild has reached (read on scrape)',
      labelNames: ['projection'] as const,
      registers,
      async collect() {
        this.reset();
        for (const { projection, position } of await scrapeSources.rebuilds.read()) this.set({ projection }, position);
      },
    }),
    rebuildHead: new Gauge({
      name: 'feedmill_rebuild_head',
      help: 'The log head when the projection rebuild began: it is done past it (read on scrape)',
      labelNames: ['projection'] as const,
      registers,
      async collect() {
        this.reset();
        for (const { projection, head } of await scrapeSources.rebuilds.read()) this.set({ projection }, head);
      },
    }),
    rebuildState: new Gauge({
      name: 'feedmill_rebuild_state',
      help: '1 for the state a projection rebuild is in (idle, running, done, failed), 0 for the others (read on scrape)',
      labelNames: ['projection', 'state'] as const,
      registers,
      async collect() {
        this.reset();
        for (const { projection, state } of await scrapeSources.rebuilds.read()) {
          for (const each of REBUILD_STATES) this.set({ projection, state: each }, each === state ? 1 : 0);
        }
      },
    }),
  };
}

/** The process's metrics (see the module's comment). */
export const metrics = defineMetrics(register);

// Event-loop lag, heap, CPU and the rest of Node's own, under their usual names.
collectDefaultMetrics({ register });

/** The registry `/metrics` answers from. */
export const metricsRegistry: Registry = register;
