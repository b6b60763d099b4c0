import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FeedClient, freePort, ScrapedMetrics, startApp, startNatsServer, waitUntilReady, waitUntilSettled, type NatsServerHandle, type RunningProcess } from '@feedmill/harness';

/**
 * The cluster's metrics and logs, on five real processes over a real nats-server: each
 * service answers `/metrics` on its status port and the gateway on its HTTP port; a request
 * id given to the gateway (or made up by it) comes back in the answer and reaches the log
 * lines of the service that handled the request, through a NATS header.
 */
const POSTS = 12;
const READS = 7;

let nats: NatsServerHandle;
let processes: RunningProcess[] = [];
let api: FeedClient;
let baseUrl: string;
let configDir: string;
const statusUrls: Record<string, string> = {};

beforeAll(async () => {
  nats = await startNatsServer();
  configDir = await mkdtemp(join(tmpdir(), 'feedmill-observed-'));
  // Ring timelines store every delivery, whether or not the reader has read: the counts are exact.
  await writeFile(join(configDir, 'feeds.json'), JSON.stringify({ groups: { user: { kind: 'producer' }, timeline: { kind: 'timeline', model: 'ring', cap: 100 } } }));
  const env = { NATS_URL: nats.url, LOG: 'jetstream', JETSTREAM_STREAM: 'OBSERVED', FEED_CONFIG: join(configDir, 'feeds.json') };
  const withStatusPort = async (app: string, extra: Record<string, string> = {}) => {
    const port = await freePort();
    statusUrls[app] = `http://127.0.0.1:${port}`;
    return startApp(app, { ...env, STATUS_PORT: String(port), ...extra });
  };
  const port = await freePort();
  baseUrl = `http://127.0.0.1:${port}`;
  processes = [
    // Debug, so that content writes a line per request it handles.
    await withStatusPort('content', { LOG_LEVEL: 'debug' }),
    await withStatusPort('graph'),
    await withStatusPort('timeline'),
    await withStatusPort('fanout'),
    startApp('gateway', { ...env, PORT: String(port) }),
  ];
  await waitUntilReady(baseUrl, processes);
  api = new FeedClient(baseUrl);
});
afterAll(async () => {
  await Promise.all(processes.map((p) => p.stop()));
  await nats?.stop();
  await rm(configDir, { recursive: true, force: true });
});

it('counts requests by route and status on the gateway, appends on content, deliveries and timelines on timeline, and fan-out at no lag', async () => {
  expect((await api.follow('timeline:watcher', 'user:poster')).status).toBe(204);
  for (let i = 0; i < POSTS; i++) expect((await api.post('user:poster', { actor: 'poster', verb: 'post', object: `note:${i}` })).status).toBe(201);
  await waitUntilSettled(api);
  for (let i = 0; i < READS; i++) expect((await api.page('timeline:watcher', 5)).status).toBe(200);
  expect((await api.call('POST', '/v1/feeds/user/poster/activities', { actor: 'poster' })).status).toBe(400);

  const gateway = await ScrapedMetrics.of(`${baseUrl}/metrics`);
  const requests = (method: string, route: string, status: string) => gateway.sum('feedmill_http_request_duration_seconds_count', { method, route, status });
  expect(requests('POST', '/v1/feeds/:group/:id/activities', '201')).toBe(POSTS);
  expect(requests('POST', '/v1/feeds/:group/:id/activities', '400')).toBe(1);
  expect(requests('GET', '/v1/feeds/:group/:id', '200')).toBe(READS);
  expect(requests('PUT', '/v1/feeds/:group/:id/follows/:targetGroup/:targetId', '204')).toBe(1);
  // A Nest controller's route is measured by its pattern too.
  expect(requests('GET', '/readyz', '200')).toBeGreaterThanOrEqual(1);
  // No series per raw URL.
  expect(gateway.labelValues('feedmill_http_request_duration_seconds_count', 'route').filter((route) => route.includes('poster'))).toEqual([]);
  expect(gateway.sum('feedmill_http_request_duration_seconds_bucket', { route: '/v1/feeds/:group/:id', status: '200', le: '+Inf' })).toBe(READS);
  expect(gateway.sum('nodejs_eventloop_lag_seconds')).toBeGreaterThanOrEqual(0);

  const content = await ScrapedMetrics.of(`${statusUrls['content']}/metrics`);
  expect(content.sum('feedmill_log_append_duration_seconds_count', { log: 'jetstream' })).toBe(POSTS);
  expect(content.sum('feedmill_log_append_events_sum', { log: 'jetstream' })).toBe(POSTS);
  expect(content.sum('feedmill_service_position', { service: 'content' })).toBeGreaterThanOrEqual(POSTS + 1);
  expect(content.sum('feedmill_service_ready', { service: 'content' })).toBe(1);

  const timeline = await ScrapedMetrics.of(`${statusUrls['timeline']}/metrics`);
  expect(timeline.sum('feedmill_timeline_deliveries_total')).toBe(POSTS);
  expect(timeline.sum('feedmill_timelines')).toBe(1);
  expect(timeline.sum('feedmill_timeline_entries')).toBe(POSTS);
  expect(timeline.sum('feedmill_rebuild_state', { projection: 'timeline', state: 'idle' })).toBe(1);

  const fanout = await ScrapedMetrics.of(`${statusUrls['fanout']}/metrics`);
  expect(fanout.sum('feedmill_fanout_lag_events')).toBe(0);
  expect(fanout.sum('feedmill_fanout_lag_seconds')).toBe(0);
  expect(fanout.sum('feedmill_service_position', { service: 'fanout' })).toBe(content.sum('feedmill_service_position', { service: 'content' }));
  expect(fanout.sum('feedmill_dead_letters_total') ?? 0).toBe(0);
});

it("carries the caller's request id into the answer and into content's log line for the request", async () => {
  const response = await fetch(`${baseUrl}/v1/feeds/user/poster/activities`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-request-id': 'trace-e2e-0042' },
    body: JSON.stringify({ actor: 'poster', verb: 'post', object: 'note:traced' }),
  });
  expect(response.status).toBe(201);
  expect(response.headers.get('x-request-id')).toBe('trace-e2e-0042');

  const content = processes[0]!;
  const line = await waitForLogLine(content, (entry) => entry['requestId'] === 'trace-e2e-0042');
  expect(line).toMatchObject({ app: 'content', level: 'debug', msg: expect.stringMatching(/^handled feed\.content\.add in [\d.]+ ms$/) });
});

it('makes up a request id when none, or an unacceptable one, is given, and carries it as far', async () => {
  const plain = await fetch(`${baseUrl}/v1/feeds/user/poster?limit=1`);
  expect(plain.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  const forged = await fetch(`${baseUrl}/v1/feeds/user/poster?limit=1`, { headers: { 'x-request-id': 'a b"} {"level":"fatal' } });
  const made = forged.headers.get('x-request-id')!;
  expect(made).toMatch(/^[0-9a-f-]{36}$/);
  expect(await waitForLogLine(processes[0]!, (entry) => entry['requestId'] === made)).toMatchObject({ msg: expect.stringMatching(/^handled feed\.content\.recent/) });
});

/** The first JSON line of `process`'s output that `matches`, waiting up to 5 s for it. */
async function waitForLogLine(process: RunningProcess, matches: (entry: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const found = process
      .output()
      .split('\n')
      .flatMap((line) => {
        try {
          return [JSON.parse(line) as Record<string, unknown>];
        } catch {
          return [];
        }
      })
      .find(matches);
    if (found) return found;
    if (Date.now() > deadline) throw new Error(`no such log line from ${process.name}; it printed:\n${process.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
