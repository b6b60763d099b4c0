import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Deployment } from 'kubernetes-models/apps/v1';
import type { ConfigMap } from 'kubernetes-models/v1';
import { metrics, metricsRegistry } from '@feedmill/observability';
import { kustomizeBuild } from './kustomize.js';

/**
 * The Grafana dashboard queries exactly what the code exports: every metric name in a
 * panel's query is one the processes register (a histogram's through its `_bucket`, `_sum`
 * and `_count` series), and every feedmill metric has a panel. The overlays carry it as a
 * ConfigMap for Grafana's sidecar, and every pod says where Prometheus scrapes it.
 */
const deploy = join(process.cwd(), 'deploy');
const dashboardText = readFileSync(join(deploy, 'base', 'grafana', 'feedmill.json'), 'utf8');

interface Panel {
  type: string;
  title: string;
  targets?: Array<{ expr: string }>;
  panels?: Panel[];
}
const dashboard = JSON.parse(dashboardText) as { uid: string; panels: Panel[] };
const panels = dashboard.panels.flatMap((panel) => [panel, ...(panel.panels ?? [])]).filter((panel) => panel.type !== 'row');
const queries = panels.flatMap((panel) => (panel.targets ?? []).map((target) => ({ panel: panel.title, expr: target.expr })));

/** The series names Prometheus stores for each registered metric. */
function exportedSeries(): Map<string, string> {
  const series = new Map<string, string>();
  for (const metric of metricsRegistry.getMetricsAsArray() as unknown as Array<{ name: string; constructor: { name: string } }>) {
    const suffixes = metric.constructor.name === 'Histogram' ? ['_bucket', '_sum', '_count'] : metric.constructor.name === 'Summary' ? ['', '_sum', '_count'] : [''];
    for (const suffix of suffixes) series.set(metric.name + suffix, metric.name);
  }
  return series;
}

/** Metric names in a PromQL expression: the identifiers in the namespaces feedmill and prom-client's defaults use. */
const metricNamesIn = (expr: string) => [...expr.matchAll(/\b(?:feedmill|nodejs|process)_[a-zA-Z0-9_]+\b/g)].map((match) => match[0]);

describe('deploy/base/grafana/feedmill.json', () => {
  const series = exportedSeries();

  it('queries only series the processes export', () => {
    expect(queries.length).toBeGreaterThan(20);
    for (const { panel, expr } of queries) {
      const names = metricNamesIn(expr);
      expect({ panel, expr, queriesAMetric: names.length > 0 }).toEqual({ panel, expr, queriesAMetric: true });
      for (const name of names) expect({ panel, name, exported: series.has(name) }).toEqual({ panel, name, exported: true });
    }
  });

  it('has a panel for every metric feedmill defines', () => {
    const queried = new Set(queries.flatMap(({ expr }) => metricNamesIn(expr)).map((name) => series.get(name)));
    const defined = Object.values(metrics).map((metric) => (metric as unknown as { name: string }).name);
    expect(defined.filter((name) => !queried.has(name))).toEqual([]);
  });

  it('names its datasource by a variable, so that it imports into any Grafana', () => {
    expect(dashboard.uid).toBe('feedmill');
    for (const panel of panels) expect({ panel: panel.title, datasource: (panel as { datasource?: { uid?: string } }).datasource?.uid }).toEqual({ panel: panel.title, datasource: '${datasource}' });
  });
});

describe.each(['standalone', 'cluster'])('deploy/overlays/%s: metrics', (overlay) => {
  const manifests = kustomizeBuild(join(deploy, 'overlays', overlay));

  it('carries the dashboard in a ConfigMap labelled for the Grafana sidecar', () => {
    const configMap = manifests.find((m) => m.kind === 'ConfigMap' && m.metadata.name === 'feedmill-grafana-dashboard') as unknown as ConfigMap;
    expect(configMap.metadata!.labels).toMatchObject({ grafana_dashboard: '1' });
    expect(configMap.data!['feedmill.json']).toBe(dashboardText);
  });

  it("asks Prometheus to scrape every feedmill pod on a port it opens, /metrics's", () => {
    const apps = manifests.filter((m) => m.kind === 'Deployment') as unknown as Deployment[];
    expect(apps.length).toBe(overlay === 'cluster' ? 5 : 1);
    for (const app of apps) {
      const annotations = app.spec!.template.metadata!.annotations ?? {};
      const ports = app.spec!.template.spec!.containers.flatMap((container) => (container.ports ?? []).map((port) => String(port.containerPort)));
      const where = app.metadata!.name;
      expect({ where, scrape: annotations['prometheus.io/scrape'], path: annotations['prometheus.io/path'] }).toEqual({ where, scrape: 'true', path: '/metrics' });
      expect(ports).toContain(annotations['prometheus.io/port']);
    }
  });
});
