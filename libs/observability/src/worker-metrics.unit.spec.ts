import { PrimaryMetrics, type MetricsLink } from './worker-metrics.js';
import { metricsRegistry } from './metrics.js';

afterEach(() => metricsRegistry.setDefaultLabels({}));

// Both ends in real processes, each labelled, are in apps/standalone/src/metrics.e2e.spec.ts.
it("leaves out a worker that does not answer, rather than failing the scrape", async () => {
  const silent: MetricsLink = { send: () => undefined, on: () => undefined };
  const primary = new PrimaryMetrics('services');
  primary.serve(silent);
  const started = Date.now();
  expect(await primary.text()).toMatch(/^nodejs_eventloop_lag_seconds\{worker="services"\} /m);
  expect(Date.now() - started).toBeLessThan(3_000);
});
