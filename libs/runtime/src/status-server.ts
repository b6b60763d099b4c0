import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ServiceStatus } from '@feedmill/contracts';
import { processMetrics, type MetricsExposition } from '@feedmill/observability';

/**
 * A service process's HTTP status port, for Kubernetes probes and Prometheus: `/healthz`
 * answers 200 while the process runs; `/readyz` answers 200 with the service's status once
 * it has caught up with the log, and 503 before that, when the status cannot be read (NATS
 * or the log is gone), and from the moment the process starts to stop; `/metrics` answers
 * the process's metrics in Prometheus's text format, from start to exit.
 */
export class StatusServer {
  private stopping = false;
  private readonly server: Server;

  private constructor(statusOf: () => Promise<ServiceStatus>, exposition: MetricsExposition) {
    this.server = createServer((request, response) => {
      const reply = (code: number, body: unknown) => {
        response.writeHead(code, { 'content-type': 'application/json' }).end(JSON.stringify(body));
      };
      const path = (request.url ?? '/').split('?')[0];
      if (request.method !== 'GET' || (path !== '/healthz' && path !== '/readyz' && path !== '/metrics')) {
        return reply(404, { code: 'not_found', message: 'the status port answers GET /healthz, GET /readyz and GET /metrics' });
      }
      if (path === '/metrics') {
        exposition.text().then(
          (text) => response.writeHead(200, { 'content-type': exposition.contentType }).end(text),
          (error: unknown) => reply(500, { code: 'internal', message: `metrics could not be gathered: ${String(error)}` }),
        );
        return;
      }
      if (path === '/healthz') return reply(200, { status: 'ok' });
      if (this.stopping) return reply(503, { ready: false, reason: 'stopping' });
      statusOf().then(
        (service) => reply(service.ready ? 200 : 503, service),
        (error: unknown) => reply(503, { ready: false, reason: String(error) }),
      );
    });
    // Probes come every few seconds: an idle keep-alive socket must not hold up the close.
    this.server.keepAliveTimeout = 1_000;
  }

  /** Listens on `port` (0 picks a free one) on every interface; `/metrics` answers what `exposition` gathers. */
  static async listen(port: number, statusOf: () => Promise<ServiceStatus>, exposition: MetricsExposition = processMetrics): Promise<StatusServer> {
    const status = new StatusServer(statusOf, exposition);
    await new Promise<void>((resolve, reject) => {
      status.server.once('error', reject);
      status.server.listen(port, '0.0.0.0', () => resolve());
    });
    return status;
  }

  /** The port it listens on. */
  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** From now on `/readyz` answers 503, so that no new work is routed here while the process stops. */
  stopTakingWork(): void {
    this.stopping = true;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
