import { appendFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FeedClient, freePort, startApp, startStandalone } from '@feedmill/harness';

/**
 * The standalone process on a damaged file log: it starts on a torn tail (cut, and said in
 * its output) with every acknowledged post, and refuses to start on damage a crash cannot
 * explain, exiting 1 with a message that names the file, the byte and what to do.
 */
let dir: string;
beforeEach(async () => (dir = await mkdtemp(join(tmpdir(), 'feedmill-damaged-log-'))));
afterEach(() => rm(dir, { recursive: true, force: true }));

async function logWithPosts(count: number): Promise<string[]> {
  const deployment = await startStandalone({ dataDir: dir, env: { SNAPSHOTS: 'off' } });
  const api = new FeedClient(deployment.baseUrl);
  const ids: string[] = [];
  for (let n = 0; n < count; n++) ids.push(((await api.post('user:bob', { actor: 'bob', verb: 'post', object: `o${n}` })).body as { id: string }).id);
  await deployment.stop();
  return ids;
}

it('starts on a torn tail with every acknowledged post, saying what it cut', async () => {
  const ids = await logWithPosts(5);
  // A crash in the middle of a sixth write: its first bytes only.
  await appendFile(join(dir, 'events.log'), Buffer.from([200, 0, 0, 0, 1, 2, 3, 4, ...Buffer.from('{"s":"activity-')]));
  const deployment = await startStandalone({ dataDir: dir, env: { SNAPSHOTS: 'off', LOG_LEVEL: 'log' } });
  const api = new FeedClient(deployment.baseUrl);
  expect((await api.readAll('user:bob')).map((a) => a.id)).toEqual([...ids].reverse());
  expect(deployment.processes[0]!.output()).toMatch(/cut a torn record at the end of the log: kept \d+ bytes, cut 23/);
  await deployment.stop();
});

it('refuses to start on a flipped bit, naming the file, the byte and the way out, and leaves the file as it was', async () => {
  await logWithPosts(5);
  const path = join(dir, 'events.log');
  const bytes = await readFile(path);
  const middle = Math.floor(bytes.length / 2);
  bytes[middle] = bytes[middle]! ^ 0x01;
  await writeFile(path, bytes);
  const app = startApp('standalone', { PORT: String(await freePort()), FEEDMILL_DATA_DIR: dir, SNAPSHOTS: 'off' });
  const code = await new Promise<number | null>((resolve) => app.child.once('exit', resolve));
  expect(code).toBe(1);
  expect(app.output()).toMatch(new RegExp(`${path.replace(/[/.]/g, '\\$&')}: the record at byte \\d+ \\(log position \\d\\) .*refuses to open.*truncate -s \\d+`));
  expect((await readFile(path)).equals(bytes)).toBe(true);
});
