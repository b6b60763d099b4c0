// Live-like fan-out in this process, with no transport: reads the medium workload's log of
// --events events (its graph as bulk imports, then single posts, written into --dir unless
// one is there, as `scripts/replay-throughput.mjs` writes it), applies the follows, then
// plans and applies the posts --batch at a time (22 by default: what one group commit of the
// posts-only phase holds) with the live fan-out's own function (`fanOutBatch`) into a memory
// timeline store of `ring` timelines. Prints timeline entries delivered per second of the
// posts, --rounds times on fresh stores. After `npm run build`.
// Usage: node scripts/fanout-in-process.mjs [--events 200000] [--dir /tmp/feedmill-replay-200000] [--batch 22] [--rounds 4]
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { profiles } from '@feedmill/bench/dist/profiles.js';
import { writeWorkloadLog } from '@feedmill/bench/dist/restart-log.js';
import { Workload } from '@feedmill/bench/dist/workload.js';
import { decodeFeedEvents } from '@feedmill/contracts';
import { openSealedFileLog } from '@feedmill/event-log';
import { fanOutBatch, FollowerIndex } from '@feedmill/feed-models';
import { readAllEvents } from '@feedmill/harness';
import { MemoryTimelineStore } from '@feedmill/stores';

const { values } = parseArgs({ options: { events: { type: 'string', default: '200000' }, dir: { type: 'string' }, batch: { type: 'string', default: '22' }, rounds: { type: 'string', default: '4' } } });
const dir = values.dir ?? `/tmp/feedmill-replay-${values.events}`;
if (!existsSync(dir)) {
  await mkdir(dir, { recursive: true });
  console.log(`writing ${values.events} events to ${dir}`);
  await writeWorkloadLog(dir, new Workload(profiles.medium, 42), Number(values.events), () => undefined);
}
const log = await openSealedFileLog({ dir });
const events = decodeFeedEvents(await readAllEvents(log));
await log.close();
// The log's posts come after its follows, and no follow has anything to backfill: planning asks content nothing.
const lookups = {
  recent: async () => [],
  isTimeline: (feed) => feed.startsWith('timeline:'),
  capOf: () => 800,
  orderOf: () => 'time',
  activities: async () => [],
  positions: async (ids) => ids.map(() => null),
  follows: async () => false,
};
for (let round = 1; round <= Number(values.rounds); round++) {
  const store = new MemoryTimelineStore(() => ({ model: 'ring', cap: 800, inactivityMs: 0 }));
  const followers = new FollowerIndex();
  let position = 0;
  let started;
  let postsFrom;
  for (let next = 0; next < events.length; ) {
    const isPost = events[next].event.type === 'ActivityAdded';
    if (isPost && started === undefined) [started, postsFrom] = [performance.now(), next];
    // A bulk import's follows share its position: they go in one batch.
    let end = next + 1;
    if (isPost) end = Math.min(events.length, next + Number(values.batch));
    else while (end < events.length && events[end].position === events[next].position) end++;
    const batch = events.slice(next, end);
    const last = batch[batch.length - 1].position;
    await fanOutBatch(batch, followers, lookups, store, position, last);
    [position, next] = [last, end];
  }
  const seconds = (performance.now() - started) / 1000;
  const { delivered } = await store.counters();
  console.log(JSON.stringify({ round, posts: events.length - postsFrom, seconds: Math.round(seconds * 1000) / 1000, deliveredPerSecond: Math.round(delivered / seconds) }));
}
