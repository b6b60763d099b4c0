// What a second core gives timeline reads when each process holds its own copy of the
// timelines: two standalones, each with the benchmark's medium graph (`ring` timelines) and
// --posts posts imported in bulk, read with wrk as reads-throughput reads one: first one
// standalone over --connections, then both at once, each over half of them (a wrk each), for
// --seconds, --rounds times. Prints reads/s of one, of both together, and their ratio. Needs
// wrk (apt-get install -y wrk) and `npm run build`.
// Usage: node scripts/reads-two-processes.mjs [--seconds 8] [--connections 16] [--posts 20000] [--rounds 3]
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { startStandalone } from '@feedmill/harness';
import { everythingApplied, mediumWorkloadImported } from './medium-workload.mjs';
import { wrkGets } from './wrk-scripts.mjs';

const { values } = parseArgs({
  options: { seconds: { type: 'string', default: '8' }, connections: { type: 'string', default: '16' }, posts: { type: 'string', default: '20000' }, rounds: { type: 'string', default: '3' } },
});
const run = promisify(execFile);
const connections = Number(values.connections);
const dir = await mkdtemp(join(tmpdir(), 'feedmill-reads-two-'));
await writeFile(join(dir, 'feeds.json'), JSON.stringify({ groups: { user: { kind: 'producer' }, timeline: { kind: 'timeline', model: 'ring', cap: 800 } } }));
const env = { FEED_CONFIG: join(dir, 'feeds.json'), SNAPSHOTS: 'off', LOG_LEVEL: 'warn' };
const standalones = [await startStandalone({ dataDir: join(dir, 'a'), env }), await startStandalone({ dataDir: join(dir, 'b'), env })];
try {
  let workload;
  for (const standalone of standalones) {
    workload = await mediumWorkloadImported(standalone.baseUrl);
    // The same posts into both: producer i % 5,000 posts the i-th.
    for (let posted = 0; posted < Number(values.posts); posted += 1_000) {
      const activities = Array.from({ length: 1_000 }, (_, i) => ({ feed: `user:p${(posted + i) % 5_000}`, actor: `p${(posted + i) % 5_000}`, verb: 'post', object: `object:${posted + i}` }));
      const answer = await fetch(`${standalone.baseUrl}/v1/activities`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ activities }) });
      if (answer.status !== 201) throw new Error(`an import answered ${answer.status}: ${await answer.text()}`);
    }
    await everythingApplied(standalone.baseUrl);
  }
  const paths = Array.from({ length: 20_000 }, () => `/v1/feeds/timeline/r${workload.nextReader()}?limit=20`);
  const script = await wrkGets(dir, paths);
  const reads = async (baseUrl, over) => {
    const { stdout } = await run('wrk', ['-t1', `-c${over}`, `-d${values.seconds}s`, '-s', script, baseUrl]);
    const failed = Number(stdout.match(/Non-2xx or 3xx responses: (\d+)/)?.[1] ?? 0);
    if (failed > 0) throw new Error(`${failed} reads of ${baseUrl} failed`);
    return Number(stdout.match(/Requests\/sec:\s+([\d.]+)/)[1]);
  };
  for (let round = 1; round <= Number(values.rounds); round++) {
    const one = await reads(standalones[0].baseUrl, connections);
    const both = (await Promise.all(standalones.map((standalone) => reads(standalone.baseUrl, connections / 2)))).reduce((sum, rate) => sum + rate, 0);
    console.log(JSON.stringify({ round, oneProcess: Math.round(one), twoProcesses: Math.round(both), ratio: Math.round((both / one) * 100) / 100 }));
  }
} finally {
  for (const standalone of standalones) await standalone.stop();
  await rm(dir, { recursive: true, force: true });
}
