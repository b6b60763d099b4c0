import { metricsRegistry } from './metrics.js';

/** Where a `/metrics` endpoint gets its text: this process's registry, or a whole process tree's. */
export interface MetricsExposition {
  text(): Promise<string>;
  readonly contentType: string;
}

/** This process's metrics alone. */
export const processMetrics: MetricsExposition = {
  text: () => metricsRegistry.metrics(),
  get contentType() {
    return metricsRegistry.contentType;
  },
};
