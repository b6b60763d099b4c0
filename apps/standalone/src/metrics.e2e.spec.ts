import { request } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FeedClient, freePort, ScrapedMetrics, startStandalone, waitFor, waitUntilSettled, type Deployment } from '@feedmill/harness';

/**
 * The standalone with two HTTP workers: `/metrics` on its status port (the services'
 * process) covers the services' process and both workers, each series labelled with its
 * `worker`; the public HTTP port, whichever worker answers, has no `/metrics`.
 */
const POSTS = 6;
const READS = 10;

let dataDir: string;
let deployment: Deployment;
let statusUrl: string;

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'feedmill-metrics-'));
  const statusPort = await freePort();
  statusUrl = `http://127.0.0.1:${statusPort}`;
  deployment = await startStandalone({ dataDir, env: { HTTP_WORKERS: '2', STATUS_PORT: String(statusPort), LOG_LEVEL: 'log' } });
  // Ready as soon as one worker answers: the reads below are meant for both.
  await waitFor(() => /2 HTTP workers/.test(deployment.processes[0]!.output()) || undefined, { timeoutMs: 30_000, intervalMs: 50, what: 'both HTTP workers to listen' });
});
afterAll(async () => {
  await deployment?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

/** A read on a connection of its own, so that Node's cluster hands each to the next worker. */
function readOnNewConnection(path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(`${deployment.baseUrl}${path}`, { agent: false, headers: { connection: 'close' } }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end();
  });
}

it('gathers the services process and every HTTP worker, each labelled, on the status port', async () => {
  const api = new FeedClient(deployment.baseUrl);
  expect((await api.follow('timeline:reader', 'user:writer')).status).toBe(204);
  for (let i = 0; i < POSTS; i++) expect((await api.post('user:writer', { actor: 'writer', verb: 'post', object: `note:${i}` })).status).toBe(201);
  await waitUntilSettled(api);
  for (let i = 0; i < READS; i++) expect(await readOnNewConnection('/v1/feeds/timeline/reader?limit=3')).toBe(200);

  const scraped = await ScrapedMetrics.of(`${statusUrl}/metrics`);
  expect(scraped.labelValues('nodejs_eventloop_lag_seconds', 'worker')).toEqual(['http-1', 'http-2', 'services']);
  // Every read was answered by one worker or the other; connections of their own went to both.
  const reads = { method: 'GET', route: '/v1/feeds/:group/:id', status: '200' };
  expect(scraped.sum('feedmill_http_request_duration_seconds_count', reads)).toBe(READS);
  expect(scraped.labelValues('feedmill_http_request_duration_seconds_count', 'worker')).toEqual(['http-1', 'http-2']);
  expect(scraped.sum('feedmill_http_request_duration_seconds_count', { route: '/v1/feeds/:group/:id/activities', status: '201' })).toBe(POSTS);
  // The services' process holds the log.
  expect(scraped.sum('feedmill_log_append_events_sum', { log: 'file', worker: 'services' })).toBe(POSTS + 1);
  // Appends that arrive one by one each have a group commit of their own; snapshots are not in the log.
  expect(scraped.sum('feedmill_file_log_group_commit_appends_sum', { worker: 'services' })).toBe(POSTS + 1);
  // The reader's timeline (a `cache`) is built where it is read: in each worker's copy of the timelines.
  expect(scraped.sum('feedmill_timeline_entries', { worker: 'http-1' })).toBe(POSTS);
  expect(scraped.sum('feedmill_timeline_entries', { worker: 'http-2' })).toBe(POSTS);
  expect(scraped.sum('feedmill_timeline_entries', { worker: 'services' })).toBe(0);
  expect(scraped.sum('feedmill_service_ready', { worker: 'services' })).toBe(4);
  expect(scraped.sum('feedmill_fanout_lag_events')).toBe(0);
});

it('answers 404 for /metrics on the public HTTP port, through either worker', async () => {
  // Connections of their own: Node's cluster hands them to both workers in turn.
  for (let i = 0; i < 4; i++) expect(await readOnNewConnection('/metrics')).toBe(404);
  expect((await fetch(`${statusUrl}/metrics`)).status).toBe(200);
});
