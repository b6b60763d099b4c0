import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FeedmillApiError, FeedmillClient } from './index.js';

const activity = (id: string) => ({ id, feed: 'user:bob', actor: 'bob', verb: 'post', object: id, time: '2026-01-01T00:00:00.000Z' });

/**
 * The client's stream against a real HTTP server that plays the API's part, including what
 * a healthy feedmill rarely does: dropping a connection (a restart, a proxy's timeout), so
 * that reconnects and `Last-Event-ID` resumes are seen on the wire.
 */
describe('FeedmillClient.stream over HTTP', () => {
  let server: Server;
  let baseUrl: string;
  /** The `Last-Event-ID` and `Authorization` of each connection, in order. */
  const connections: Array<{ lastEventId: string | undefined; authorization: string | undefined }> = [];
  let handle: (request: IncomingMessage, response: ServerResponse) => void;

  beforeAll(async () => {
    server = createServer((request, response) => {
      connections.push({ lastEventId: request.headers['last-event-id'] as string | undefined, authorization: request.headers.authorization });
      handle(request, response);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  beforeEach(() => {
    connections.length = 0;
  });

  it('yields typed events, skips heartbeats, and reconnects after a dropped connection with Last-Event-ID', async () => {
    handle = (request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      if (request.headers['last-event-id'] === undefined) {
        // The first connection: a reset and an event, then it drops.
        response.end(`retry: 50\n\n: heartbeat\n\nid: e-0\nevent: reset\ndata: {"items":[],"newest":null}\n\nid: e-1\nevent: added\ndata: ${JSON.stringify({ activity: activity('a1'), cursor: 'c1' })}\n\n`);
      } else {
        response.write(`id: e-2\nevent: removed\ndata: {"id":"a1"}\n\n`);
      }
    };
    const client = new FeedmillClient({ baseUrl, token: 'secret-token' });
    const stream = client.stream('timeline:alice');
    const events = [];
    for await (const event of stream) {
      events.push(event);
      if (events.length === 3) break;
    }
    expect(events).toEqual([
      { id: 'e-0', type: 'reset', data: { items: [], newest: null } },
      { id: 'e-1', type: 'added', data: { activity: activity('a1'), cursor: 'c1' } },
      { id: 'e-2', type: 'removed', data: { id: 'a1' } },
    ]);
    expect(connections).toEqual([
      { lastEventId: undefined, authorization: 'Bearer secret-token' },
      { lastEventId: 'e-1', authorization: 'Bearer secret-token' },
    ]);
    expect(stream.lastEventId).toBe('e-2');
    expect(stream.connections).toBe(2);
  });

  it('resumes from the lastEventId it is given, and ends with the API error of a refusal', async () => {
    handle = (_request, response) => {
      response.writeHead(403, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ code: 'forbidden', message: 'not yours', field: 'id' }));
    };
    const stream = new FeedmillClient({ baseUrl }).stream('timeline:alice', { lastEventId: 'e-7' });
    const refused = await stream.next().catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(FeedmillApiError);
    expect(refused).toMatchObject({ status: 403, code: 'forbidden', field: 'id' });
    expect(connections).toEqual([{ lastEventId: 'e-7', authorization: undefined }]);
  });

  it('ends quietly when closed while it waits', async () => {
    handle = (_request, response) => void response.writeHead(200, { 'content-type': 'text/event-stream' });
    const stream = new FeedmillClient({ baseUrl }).stream('timeline:alice');
    const waiting = stream.next();
    await new Promise((resolve) => setTimeout(resolve, 100));
    stream.close();
    expect(await waiting).toEqual({ done: true, value: undefined });
  });
});
