/** One sample of a Prometheus text exposition: `name{labels} value`. */
export interface MetricSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** The samples of a Prometheus text exposition (comments skipped). */
export function parseExposition(text: string): MetricSample[] {
  const samples: MetricSample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = SAMPLE.exec(line);
    if (!match) throw new Error(`not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const [, name, value] of (match[2] ?? '').matchAll(LABEL)) labels[name!] = value!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    samples.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return samples;
}

/** A scrape of `/metrics`: the samples, and the sum of those of a name whose labels include `labels`. */
export class ScrapedMetrics {
  constructor(readonly samples: MetricSample[]) {}

  static async of(url: string): Promise<ScrapedMetrics> {
    const response = await fetch(url);
    if (response.status !== 200) throw new Error(`GET ${url}: ${response.status}`);
    if (!(response.headers.get('content-type') ?? '').startsWith('text/plain')) throw new Error(`GET ${url}: content-type ${response.headers.get('content-type')}`);
    return new ScrapedMetrics(parseExposition(await response.text()));
  }

  matching(name: string, labels: Record<string, string> = {}): MetricSample[] {
    return this.samples.filter((sample) => sample.name === name && Object.entries(labels).every(([key, value]) => sample.labels[key] === value));
  }

  /** The sum over the matching samples; undefined when none matches. */
  sum(name: string, labels: Record<string, string> = {}): number | undefined {
    const found = this.matching(name, labels);
    return found.length === 0 ? undefined : found.reduce((total, sample) => total + sample.value, 0);
  }

  /** Every value a label takes among the samples of `name`. */
  labelValues(name: string, label: string): string[] {
    return [...new Set(this.matching(name).flatMap((sample) => (sample.labels[label] === undefined ? [] : [sample.labels[label]!])))].sort();
  }
}
