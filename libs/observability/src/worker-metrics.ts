import { AggregatorRegistry } from 'prom-client';
import { metricsRegistry } from './metrics.js';
import type { MetricsExposition } from './exposition.js';

/** One metric as prom-client's `getMetricsAsJSON` gives it. */
type MetricJson = Awaited<ReturnType<typeof metricsRegistry.getMetricsAsJSON>>[number];

/**
 * Metrics across a `node:cluster` primary and its workers (the standalone's HTTP workers).
 * Each worker labels its metrics with `worker` and sends them, as prom-client's JSON, when
 * its primary asks over the IPC channel; the primary merges them with its own through
 * prom-client's `AggregatorRegistry.aggregate` into one exposition. Series of different
 * workers keep apart by their label; nothing is summed across processes that Prometheus
 * could not sum itself.
 *
 * prom-client's own cluster support asks every worker of `cluster.workers` and leaves the
 * primary's metrics out; here the primary holds the services, so it speaks for itself too.
 */

/** One end of a worker's IPC channel, as `MessageLink` in transport has it. */
export interface MetricsLink {
  send(message: unknown): unknown;
  on(event: 'message', listener: (message: unknown) => void): unknown;
}

interface MetricsRequest {
  metrics: 'request';
  id: number;
}

interface MetricsReply {
  metrics: 'reply';
  id: number;
  json: MetricJson[];
}

/** Asks from a worker: the whole process tree's metrics, which only the primary can gather. */
interface TreeRequest {
  metrics: 'tree';
  id: number;
}

interface TreeReply {
  metrics: 'tree-reply';
  id: number;
  text: string;
}

type MetricsMessage = MetricsRequest | MetricsReply | TreeRequest | TreeReply;

function isMetricsMessage(message: unknown): message is MetricsMessage {
  return typeof message === 'object' && message !== null && !Array.isArray(message) && typeof (message as { metrics?: unknown }).metrics === 'string';
}

/** How long the primary waits for a worker's metrics; a worker that does not answer is left out of that scrape. */
const WORKER_ANSWER_MS = 2_000;

/** The primary's side: gathers its own metrics and those of every worker it serves. */
export class PrimaryMetrics implements MetricsExposition {
  private readonly workers = new Set<MetricsLink>();
  private readonly waiting = new Map<number, (json: MetricJson[]) => void>();
  private nextId = 0;

  /** `label` names the primary's own series (`worker="services"`). */
  constructor(label: string) {
    metricsRegistry.setDefaultLabels({ worker: label });
  }

  /** Serves a worker: answers its requests for the tree's metrics, and takes its replies. Returns a function that forgets it. */
  serve(worker: MetricsLink): () => void {
    this.workers.add(worker);
    worker.on('message', (message) => {
      if (!isMetricsMessage(message)) return;
      if (message.metrics === 'reply') this.waiting.get(message.id)?.(message.json);
      else if (message.metrics === 'tree') void this.text().then((text) => worker.send({ metrics: 'tree-reply', id: message.id, text } satisfies TreeReply));
    });
    return () => void this.workers.delete(worker);
  }

  /** The exposition of the primary and every worker that answered in time. */
  async text(): Promise<string> {
    const replies = await Promise.all([...this.workers].map((worker) => this.ask(worker)));
    const own = await metricsRegistry.getMetricsAsJSON();
    return AggregatorRegistry.aggregate([own, ...replies.filter((json) => json !== undefined)]).metrics();
  }

  get contentType(): string {
    return metricsRegistry.contentType;
  }

  private ask(worker: MetricsLink): Promise<MetricJson[] | undefined> {
    const id = this.nextId++;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        resolve(undefined);
      }, WORKER_ANSWER_MS);
      this.waiting.set(id, (json) => {
        clearTimeout(timer);
        this.waiting.delete(id);
        resolve(json);
      });
      try {
        worker.send({ metrics: 'request', id } satisfies MetricsRequest);
      } catch {
        // A worker that is exiting: left out of this scrape.
        clearTimeout(timer);
        this.waiting.delete(id);
        resolve(undefined);
      }
    });
  }
}

/** A worker's side: labels its series, answers the primary, and asks it for the whole tree's metrics. */
export class WorkerMetrics implements MetricsExposition {
  private readonly waiting = new Map<number, (text: string) => void>();
  private nextId = 0;

  constructor(
    private readonly primary: MetricsLink,
    label: string,
  ) {
    metricsRegistry.setDefaultLabels({ worker: label });
    primary.on('message', (message) => {
      if (!isMetricsMessage(message)) return;
      if (message.metrics === 'request') void metricsRegistry.getMetricsAsJSON().then((json) => primary.send({ metrics: 'reply', id: message.id, json } satisfies MetricsReply));
      else if (message.metrics === 'tree-reply') this.waiting.get(message.id)?.(message.text);
    });
  }

  get contentType(): string {
    return metricsRegistry.contentType;
  }

  /** The whole tree's exposition, as the primary gathers it. */
  text(): Promise<string> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        reject(new Error('the services process did not answer with its metrics'));
      }, WORKER_ANSWER_MS * 2);
      this.waiting.set(id, (text) => {
        clearTimeout(timer);
        this.waiting.delete(id);
        resolve(text);
      });
      this.primary.send({ metrics: 'tree', id } satisfies TreeRequest);
    });
  }
}
