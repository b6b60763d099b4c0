import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FeedId } from '@feedmill/contracts';
import { openSealedFileLog } from '@feedmill/event-log';
import { FeedClient, freePort, readAllEvents, startStandalone, waitUntilSettled, type Deployment } from '@feedmill/harness';
import { AcknowledgedWrites, SeededChoices, checkAcknowledgedWrites, checkTimelines, runMixedWorkload } from '@feedmill/testing';

/**
 * The standalone killed with SIGKILL at a random moment under concurrent posts, follows,
 * unfollows, removals and reads, again and again. After each kill the log is read apart
 * from the server (the file log library, before the restart) and every acknowledged write
 * must be in it; after each restart every timeline and producer feed the API serves must
 * equal the reference computed from that log, with nothing twice. 3 cycles in `npm test`,
 * 20 with `FEEDMILL_FAULTS=full`; `FEEDMILL_FAULTS_SEED` replays a run.
 */

const FULL = process.env['FEEDMILL_FAULTS'] === 'full';
const CYCLES = FULL ? 20 : 3;
const SEED = Number(process.env['FEEDMILL_FAULTS_SEED'] ?? Math.floor(Math.random() * 2 ** 31));
const producers = Array.from({ length: 8 }, (_, i) => `user:p${i}` as FeedId);
const readers = Array.from({ length: 16 }, (_, i) => `timeline:r${i}` as FeedId);

let root: string;
beforeAll(async () => (root = await mkdtemp(join(tmpdir(), 'feedmill-kill-cycles-'))));
afterAll(() => rm(root, { recursive: true, force: true }));

async function eventsOnDisk(dataDir: string) {
  // Activities are sealed with their feed's key in the log: read as the standalone reads them.
  const log = await openSealedFileLog({ dir: dataDir });
  try {
    return await readAllEvents(log);
  } finally {
    await log.close();
  }
}

it(`keeps every acknowledged write and rebuilds timelines equal to the log across ${CYCLES} SIGKILLs at random moments`, async () => {
  const started = Date.now();
  const choices = new SeededChoices(SEED);
  console.log(`kill cycles: seed ${SEED} (replay with FEEDMILL_FAULTS_SEED=${SEED}), ${CYCLES} cycles`);
  const dataDir = join(root, 'data');
  const config = join(root, 'feeds.json');
  // A small cap, so that timelines are read past what they store; snapshots often, so that kills land in them too.
  await writeFile(config, JSON.stringify({ groups: { user: { kind: 'producer' }, timeline: { kind: 'timeline', model: 'ring', cap: 30 } } }));
  const env = { FEED_CONFIG: config, SNAPSHOT_EVERY_EVENTS: '250', SNAPSHOT_EVERY_SECONDS: '1' };
  const port = await freePort();
  const api = new FeedClient(`http://127.0.0.1:${port}`);
  const writes = new AcknowledgedWrites();
  const lines: string[] = [];
  let deployment: Deployment = await startStandalone({ dataDir, env, port });
  try {
    for (let cycle = 1; cycle <= CYCLES; cycle++) {
      let stop!: () => void;
      const stopped = new Promise<void>((resolve) => (stop = resolve));
      const killAfterMs = choices.int(150, 2500);
      const running = runMixedWorkload(api, { producers, readers, clients: 12 }, writes, choices, stopped, `c${cycle}`);
      await new Promise((resolve) => setTimeout(resolve, killAfterMs));
      stop();
      await deployment.processes[0]!.kill();
      const { sent, failed } = await running;

      const events = await eventsOnDisk(dataDir);
      const acknowledged = checkAcknowledgedWrites(events, writes);
      expect({ cycle, findings: acknowledged.findings }).toEqual({ cycle, findings: [] });

      deployment = await startStandalone({ dataDir, env, port, readyTimeoutMs: 60_000 });
      await waitUntilSettled(api, 60_000);
      const timelines = await checkTimelines(api, events, readers, producers);
      expect({ cycle, findings: timelines.findings }).toEqual({ cycle, findings: [] });
      lines.push(`cycle ${cycle}: killed after ${killAfterMs} ms, ${sent} requests (${failed} cut off), log ${events.length} events, ${acknowledged.checked} acknowledged writes checked, ${timelines.entries} timeline entries compared`);
    }
  } finally {
    await deployment.stop();
  }
  console.log(`kill cycles: ${CYCLES} cycles, ${writes.acknowledged} writes acknowledged and checked after every kill, in ${((Date.now() - started) / 1000).toFixed(1)} s\n${lines.join('\n')}`);
  expect(writes.posts.size).toBeGreaterThan(CYCLES * 10);
}, 30 * 60_000);
