import { subjects, type ServiceStatus } from '@feedmill/contracts';
import { scrapeSources } from '@feedmill/observability';
import type { ServiceClient } from '@feedmill/transport';

const STATUS_SUBJECTS = [subjects.content.status, subjects.graph.status, subjects.timeline.status, subjects.fanout.status];

/**
 * The four services of one process (the standalone) as one status: ready when every one is,
 * at the position of the one furthest behind.
 */
export async function servicesStatus(client: ServiceClient): Promise<ServiceStatus> {
  const statuses = await Promise.all(STATUS_SUBJECTS.map((subject) => client.request(subject, {})));
  return {
    service: 'standalone',
    ready: statuses.every((status) => status.ready),
    position: Math.min(...statuses.map((status) => status.position)),
    counters: Object.fromEntries(statuses.map((status) => [`${status.service}Position`, status.position])),
  };
}

/** Gives `/metrics` each service's position and readiness, asked through `client` on every scrape. */
export function reportServicesOnScrape(client: ServiceClient): void {
  for (const subject of STATUS_SUBJECTS) {
    scrapeSources.services.add(async () => {
      const { service, ready, position } = await client.request(subject, {});
      return { service, ready, position };
    });
  }
}
