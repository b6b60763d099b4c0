import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { smallDisk, type SmallDisk } from '@feedmill/event-log/testing';
import { FeedClient, startStandalone, type Deployment } from '@feedmill/harness';

/**
 * The standalone's log on a disk that fills up: a post that does not fit is answered 503
 * `unavailable` (retryable, nothing written), the process goes on serving, and posts are
 * taken again once space is freed. It needs a real tmpfs (root, and a kernel that lets it
 * mount one); without it the test says so and checks nothing.
 */
let root: string;
let disk: SmallDisk;
let deployment: Deployment | undefined;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'feedmill-full-disk-'));
  disk = await smallDisk(root, 4 * 1024 * 1024);
});
afterAll(async () => {
  await deployment?.stop();
  await disk.dispose();
  await rm(root, { recursive: true, force: true });
});

it('answers 503 unavailable to posts that do not fit, keeps serving, and takes posts again once space is freed', async () => {
  if (disk.kind !== 'tmpfs') {
    console.log('full disk (standalone): NOT CHECKED: no tmpfs could be mounted (not root, or mount refused); the file log int suite simulates ENOSPC instead');
    return;
  }
  deployment = await startStandalone({ dataDir: join(root, 'data'), env: { SNAPSHOTS: 'off' } });
  const api = new FeedClient(deployment.baseUrl);
  const kept: string[] = [];
  for (let n = 0; n < 5; n++) kept.push(((await api.post('user:bob', { actor: 'bob', verb: 'post', object: `o${n}` })).body as { id: string }).id);
  await disk.fill();
  const refused: Array<{ status: number; code: string }> = [];
  for (let n = 0; n < 40; n++) {
    const answer = await api.post('user:bob', { actor: 'bob', verb: 'post', object: `full-${n}`, extra: { pad: 'x'.repeat(2000) } });
    if (answer.status === 201) kept.push((answer.body as { id: string }).id);
    else refused.push({ status: answer.status, code: (answer.body as unknown as { code: string }).code });
  }
  expect(refused.length).toBeGreaterThan(0);
  expect(new Set(refused.map((r) => `${r.status} ${r.code}`))).toEqual(new Set(['503 unavailable']));
  expect((await api.readAll('user:bob')).map((a) => a.id)).toEqual([...kept].reverse());

  await disk.free();
  const after = await api.post('user:bob', { actor: 'bob', verb: 'post', object: 'after' });
  expect(after.status).toBe(201);
  expect((await api.readAll('user:bob')).map((a) => a.id)).toEqual([(after.body as { id: string }).id, ...[...kept].reverse()]);
});
