import type { ServiceStatus } from '@feedmill/contracts';
import { scrapeSources } from '@feedmill/observability';
import { StatusServer } from './status-server.js';

describe('StatusServer', () => {
  let status: ServiceStatus | Error = { service: 'graph', ready: false, position: -1 };
  let server: StatusServer;
  const get = async (path: string) => {
    const response = await fetch(`http://127.0.0.1:${server.port}${path}`);
    return { status: response.status, body: (await response.json()) as unknown };
  };

  beforeAll(async () => {
    server = await StatusServer.listen(0, async () => {
      if (status instanceof Error) throw status;
      return status;
    });
  });
  afterAll(() => server.close());

  it('is live at once, and ready only once the service says it caught up', async () => {
    expect(await get('/healthz')).toEqual({ status: 200, body: { status: 'ok' } });
    expect(await get('/readyz')).toEqual({ status: 503, body: { service: 'graph', ready: false, position: -1 } });
    status = { service: 'graph', ready: true, position: 41 };
    expect(await get('/readyz?verbose')).toEqual({ status: 200, body: { service: 'graph', ready: true, position: 41 } });
  });

  it('is unready when the status cannot be read, and once the process stops taking work', async () => {
    status = new Error('NATS connection closed');
    expect(await get('/readyz')).toEqual({ status: 503, body: { ready: false, reason: 'Error: NATS connection closed' } });
    status = { service: 'graph', ready: true, position: 41 };
    server.stopTakingWork();
    expect(await get('/readyz')).toEqual({ status: 503, body: { ready: false, reason: 'stopping' } });
    expect((await get('/healthz')).status).toBe(200);
    expect(await get('/status')).toMatchObject({ status: 404, body: { code: 'not_found' } });
  });

  it("answers /metrics in Prometheus's text format while it stops too, with the service's position read on the scrape", async () => {
    const remove = scrapeSources.services.add(() => ({ service: 'graph', ready: true, position: 41 }));
    try {
      const response = await fetch(`http://127.0.0.1:${server.port}/metrics`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      const text = await response.text();
      expect(text).toMatch(/^feedmill_service_position\{service="graph"\} 41$/m);
      expect(text).toMatch(/^nodejs_eventloop_lag_seconds /m);
    } finally {
      remove();
    }
  });
});
