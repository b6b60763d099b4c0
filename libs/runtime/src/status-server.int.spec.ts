import type { ServiceStatus } from '@feedmill/contracts';
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
});
