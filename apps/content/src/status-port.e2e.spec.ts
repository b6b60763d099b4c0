import { JetStreamEventLog } from '@feedmill/event-log';
import { subjects, type ServiceStatus } from '@feedmill/contracts';
import { freePort, readAllEvents, startApp, startNatsServer, waitFor, type NatsServerHandle, type RunningProcess } from '@feedmill/harness';
import { natsClient, type ServiceClient } from '@feedmill/transport';

/**
 * A service process answers Kubernetes probes on its status port, and on SIGTERM exits
 * having answered the requests sent to it, acknowledging only appends the log has.
 */
const STREAM = 'STATUSPORT';
let nats: NatsServerHandle;
let content: RunningProcess | undefined;
let client: ServiceClient;
let statusUrl: string;

beforeAll(async () => {
  nats = await startNatsServer();
  const port = await freePort();
  statusUrl = `http://127.0.0.1:${port}`;
  content = startApp('content', { NATS_URL: nats.url, LOG: 'jetstream', JETSTREAM_STREAM: STREAM, STATUS_PORT: String(port), SHUTDOWN_GRACE_MS: '1500' });
  client = natsClient(nats.url);
});
afterAll(async () => {
  await content?.kill();
  await client?.close();
  await nats?.stop();
});

/** A service's status port (not the gateway's API, which the typed client covers), read raw. */
const get = async (path: string) => {
  const response = await fetch(`${statusUrl}${path}`).catch(() => undefined);
  return response && { status: response.status, body: (await response.json()) as Partial<ServiceStatus> & { reason?: string } };
};

it('answers /healthz and /readyz with the service caught up, /metrics, and 404 elsewhere', async () => {
  // A start that never gets ready fails with what the process printed.
  const ready = await waitFor(async () => ((await get('/readyz'))?.status === 200 ? get('/readyz') : undefined), { timeoutMs: 30_000, intervalMs: 50, what: 'content /readyz' }).catch((error: Error) => {
    throw new Error(`${error.message}; content printed:\n${content!.output()}`);
  });
  expect(ready).toMatchObject({ status: 200, body: { service: 'content', ready: true } });
  expect(await get('/healthz')).toEqual({ status: 200, body: { status: 'ok' } });
  expect((await get('/status'))?.status).toBe(404);
  const metrics = await fetch(`${statusUrl}/metrics`);
  expect(metrics.status).toBe(200);
  expect(await metrics.text()).toMatch(/^feedmill_service_ready\{service="content"\} 1$/m);
});

// Adds are quick: most, often all, are answered before the signal arrives. Requests held at the
// stop, readiness while stopping, and a replica taking new requests over are shown by
// apps/timeline/src/timeline-shutdown.e2e.spec.ts, where the stopping process is kept busy.
it('on SIGTERM exits once it answered the adds sent before, and acknowledges only what the log has', async () => {
  const add = (i: number) =>
    client.request(subjects.content.add, { feed: 'user:a', id: `a${i}`, receivedAt: new Date(0).toISOString(), activity: { actor: 'a', verb: 'post', object: `o${i}` } });
  const first = add(0);
  const replies = Array.from({ length: 60 }, (_, i) => add(i + 1));
  await first;
  const exited = new Promise((done) => content!.child.once('exit', done));
  content!.child.kill('SIGTERM');
  const settled = await Promise.allSettled(replies);
  await exited;
  expect(content!.child.exitCode).toBe(0);

  const log = await JetStreamEventLog.connect({ servers: nats.url, streamName: STREAM });
  const logged = new Set((await readAllEvents(log)).map((event) => (event.data as { activity: { id: string } }).activity.id));
  await log.close();
  const acknowledged = settled.flatMap((reply, i) => (reply.status === 'fulfilled' ? [`a${i + 1}`] : []));
  // Every request sent before the signal was answered.
  expect(acknowledged).toHaveLength(60);
  for (const id of acknowledged) expect(logged).toContain(id);
});
