import { once } from 'node:events';
import http from 'node:http';
import { createServer } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { childProcessesOf, FeedClient, freePort, startApp, startStandalone, waitFor, waitUntilReady, waitUntilSettled, type Deployment } from '@feedmill/harness';

const HTTP_WORKERS = 2;

let dataDir: string;
let port: number;
let deployment: Deployment | undefined;

beforeEach(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'feedmill-http-workers-'));
  port = await freePort();
});
afterEach(async () => {
  await deployment?.stop();
  deployment = undefined;
  await rm(dataDir, { recursive: true, force: true });
});

const start = async () => (deployment = await startStandalone({ dataDir, port, env: { HTTP_WORKERS: String(HTTP_WORKERS) } }));

const isRunning = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Posts `count` activities to a producer a reader follows; returns their ids, newest first. */
async function postSome(api: FeedClient, count: number): Promise<string[]> {
  expect((await api.follow('timeline:reader', 'user:writer')).status).toBe(204);
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const posted = await api.post('user:writer', { actor: 'writer', verb: 'post', object: `note:${i}` });
    expect(posted.status).toBe(201);
    ids.unshift(posted.body.id);
  }
  return ids;
}

/**
 * A reader's page on a connection of its own (the cluster hands each new connection to the
 * next worker), or on one of `agent`'s kept-alive connections.
 */
function readerPage(baseUrl: string, feed: string, agent?: http.Agent): Promise<string[]> {
  const [group, id] = feed.split(':');
  return new Promise((resolve, reject) => {
    const options = agent ? { agent } : { agent: false, headers: { connection: 'close' } };
    const request = http.get(`${baseUrl}/v1/feeds/${group}/${id}?limit=25`, options, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => (response.statusCode === 200 ? resolve((JSON.parse(body) as { items: Array<{ id: string }> }).items.map((a) => a.id)) : reject(new Error(`${response.statusCode}: ${body}`))));
    });
    request.on('error', reject);
    request.setTimeout(5_000, () => request.destroy(new Error(`no answer from ${baseUrl} in 5 s`)));
  });
}

describe(`standalone with ${HTTP_WORKERS} HTTP workers`, () => {
  test('each worker reads timelines from its copy, which has a follow and an unfollow by the time they answer', async () => {
    const { baseUrl } = await start();
    const api = new FeedClient(baseUrl);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.unshift((await api.post('user:writer', { actor: 'writer', verb: 'post', object: `note:${i}` })).body.id);
    const readEverywhere = () => Promise.all(Array.from({ length: 4 * HTTP_WORKERS }, () => readerPage(baseUrl, 'timeline:reader')));

    // The follow brings the writer's history into the timeline: every worker's copy has it once the follow answered.
    expect((await api.follow('timeline:reader', 'user:writer')).status).toBe(204);
    expect(await readEverywhere()).toEqual(Array.from({ length: 4 * HTTP_WORKERS }, () => ids));
    expect((await api.unfollow('timeline:reader', 'user:writer')).status).toBe(204);
    expect(await readEverywhere()).toEqual(Array.from({ length: 4 * HTTP_WORKERS }, () => []));
    expect(await api.counters('timeline')).toMatchObject({ replicas: HTTP_WORKERS, replicasBehind: 0 });
  });

  test('the workers answer timeline reads from their copies while the services’ process is paused', async () => {
    const { baseUrl, processes } = await start();
    const api = new FeedClient(baseUrl);
    const ids = await postSome(api, 3);
    await waitUntilSettled(api);
    // Connections opened before the pause, on both workers: the primary, paused, accepts no new one.
    const agent = new http.Agent({ keepAlive: true, maxSockets: 2 * HTTP_WORKERS });
    const readOnEach = () => Promise.all(Array.from({ length: 2 * HTTP_WORKERS }, () => readerPage(baseUrl, 'timeline:reader', agent)));
    try {
      expect(await readOnEach()).toEqual(Array.from({ length: 2 * HTTP_WORKERS }, () => ids));
      process.kill(processes[0]!.child.pid!, 'SIGSTOP');
      try {
        expect(await readOnEach()).toEqual(Array.from({ length: 2 * HTTP_WORKERS }, () => ids));
      } finally {
        process.kill(processes[0]!.child.pid!, 'SIGCONT');
      }
    } finally {
      agent.destroy();
    }
  });

  test('answers from its workers: their own validation errors, and the services’ errors through the link', async () => {
    const { baseUrl, processes } = await start();
    expect(childProcessesOf(processes[0]!.child.pid!)).toHaveLength(HTTP_WORKERS);
    const api = new FeedClient(baseUrl);

    const invalid = await api.post('user:writer', { actor: 'writer', verb: '', object: 'note:1' });
    expect(invalid.status).toBe(400);
    expect(invalid.body).toMatchObject({ code: 'invalid_request', field: 'body.verb' });

    const missing = await api.remove('user:writer', '4b0f9c0e-9d0a-4d43-9d4b-0e1f1e0c1a2b');
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ code: 'activity_not_found' });
  });

  test('a worker killed with SIGKILL amid requests is replaced, and the standalone keeps answering', async () => {
    const { baseUrl, processes } = await start();
    const primary = processes[0]!.child.pid!;
    const api = new FeedClient(baseUrl);
    const ids = await postSome(api, 5);
    // Killed with calls in flight: the services' answers to it go nowhere, and must not take the services down.
    // Raw `fetch`, each with a timeout: these only need to be in flight, and may be cut off.
    const inFlight = Array.from({ length: 200 }, () =>
      fetch(`${baseUrl}/v1/feeds/timeline/reader?limit=10`, { signal: AbortSignal.timeout(5_000) })
        .then((response) => response.text())
        .catch(() => undefined),
    );
    const [victim] = childProcessesOf(primary);
    process.kill(victim!, 'SIGKILL');
    await Promise.all(inFlight);
    expect(isRunning(primary)).toBe(true);
    await waitFor(() => (!isRunning(victim!) && childProcessesOf(primary).length === HTTP_WORKERS) || undefined, { timeoutMs: 20_000, intervalMs: 100, what: 'a new HTTP worker' });
    // Every request from here on finds a live worker.
    for (let i = 0; i < 20; i++) expect((await api.readAll('timeline:reader', 10)).map((a) => a.id)).toEqual(ids);
  });

  test('a worker killed by a signal while it starts is replaced too: only one that exits on its own stops the standalone', async () => {
    const app = startApp('standalone', { PORT: String(port), FEEDMILL_DATA_DIR: dataDir, HTTP_WORKERS: String(HTTP_WORKERS) });
    deployment = { baseUrl: `http://127.0.0.1:${port}`, processes: [app], stop: () => app.stop() };
    const [victim] = await waitFor(() => (childProcessesOf(app.child.pid!).length > 0 ? childProcessesOf(app.child.pid!) : undefined), { timeoutMs: 20_000, intervalMs: 5, what: 'a first HTTP worker' });
    process.kill(victim!, 'SIGKILL');
    await waitUntilReady(deployment.baseUrl, [app]);
    await waitFor(() => (!isRunning(victim!) && childProcessesOf(app.child.pid!).length === HTTP_WORKERS) || undefined, { timeoutMs: 20_000, intervalMs: 100, what: 'a new HTTP worker' });
    expect(app.child.exitCode).toBeNull();
    expect(app.output()).toMatch(/exited \(SIGKILL\); starting another/);
  });

  test('a worker that cannot listen stops the standalone, which exits 1', async () => {
    const taken = createServer().listen(port, '0.0.0.0');
    await once(taken, 'listening');
    try {
      const app = startApp('standalone', { PORT: String(port), FEEDMILL_DATA_DIR: dataDir, HTTP_WORKERS: String(HTTP_WORKERS) });
      const [code] = (await once(app.child, 'exit')) as [number | null];
      expect(code).toBe(1);
      expect(app.output()).toMatch(/before it listened on port/);
    } finally {
      taken.close();
    }
  });

  test('SIGTERM stops the workers and then the services; a restart has every acknowledged post', async () => {
    const { baseUrl, processes } = await start();
    const primary = processes[0]!;
    const workers = childProcessesOf(primary.child.pid!);
    const ids = await postSome(new FeedClient(baseUrl), 8);
    await primary.stop();
    expect(primary.child.exitCode).toBe(0);
    expect(workers.filter(isRunning)).toEqual([]);

    const restarted = await start();
    const api = new FeedClient(restarted.baseUrl);
    await waitUntilSettled(api);
    expect((await api.readAll('timeline:reader', 10)).map((a) => a.id)).toEqual(ids);
  });

  test('a crash of the services process (SIGKILL) takes its workers with it and frees the port; a restart has every acknowledged post', async () => {
    const { baseUrl, processes } = await start();
    const primary = processes[0]!;
    const workers = childProcessesOf(primary.child.pid!);
    const ids = await postSome(new FeedClient(baseUrl), 8);
    await primary.kill();
    await waitFor(() => workers.every((pid) => !isRunning(pid)) || undefined, { timeoutMs: 20_000, intervalMs: 100, what: 'the workers to exit' });

    const restarted = await start();
    const api = new FeedClient(restarted.baseUrl);
    await waitUntilSettled(api);
    expect((await api.readAll('timeline:reader', 10)).map((a) => a.id)).toEqual(ids);
  });
});
