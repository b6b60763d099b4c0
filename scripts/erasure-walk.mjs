// Times an erasure in the memory timelines, which apply it in one turn of the event loop:
// builds a `ring` timeline store of --readers readers, each following 7 of --producers
// producers drawn with a skew (so a few have thousands of followers), delivers --posts posts,
// then erases three producers (the most followed, the second, one of the least) and prints
// how long each took. Seeded: the same arguments build the same store. After `npm run build`.
// Usage: node scripts/erasure-walk.mjs [--readers 30000] [--producers 5000] [--posts 40000]
import { parseArgs } from 'node:util';
import { MemoryTimelineStore } from '@feedmill/stores';

const { values } = parseArgs({ options: { readers: { type: 'string', default: '30000' }, producers: { type: 'string', default: '5000' }, posts: { type: 'string', default: '40000' } } });
const readers = Number(values.readers);
const producers = Number(values.producers);
const BATCH = 5_000;

let seed = 42;
const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648);
const skewed = () => Math.floor(random() ** 2 * producers);

const store = new MemoryTimelineStore(() => ({ model: 'ring', cap: 800, inactivityMs: 0 }));
let position = 0;
const deliver = async (deliveries) => {
  const reply = await store.deliver({ after: position, position: position + 1, deliveries });
  if (!reply.applied) throw new Error(`the store refused the batch after ${position}`);
  position++;
};

const followers = Array.from({ length: producers }, () => []);
for (let reader = 0; reader < readers; reader++) for (let follows = 0; follows < 7; follows++) followers[skewed()].push(`timeline:r${reader}`);
let batch = [];
for (const [producer, of] of followers.entries()) {
  for (const reader of of) {
    batch.push({ kind: 'follow', reader, target: `user:p${producer}`, recent: [], exhausted: true });
    if (batch.length === BATCH) await deliver(batch.splice(0));
  }
}
const started = Date.UTC(2026, 0, 1);
for (let post = 0; post < Number(values.posts); post++) {
  const producer = skewed();
  batch.push({ kind: 'insert', readers: followers[producer], activity: { id: `a${post}`, feed: `user:p${producer}`, actor: `p${producer}`, verb: 'post', object: `post ${post}`, time: new Date(started + post * 1000).toISOString() } });
  if (batch.length === BATCH / 10) await deliver(batch.splice(0));
}
if (batch.length > 0) await deliver(batch.splice(0));

const { timelines, entries } = await store.counters();
console.log(`${timelines} timelines, ${entries} entries`);
const byFollowers = [...followers.keys()].sort((a, b) => followers[b].length - followers[a].length);
for (const producer of [byFollowers[0], byFollowers[1], byFollowers[byFollowers.length - 1]]) {
  const erasing = performance.now();
  await deliver([{ kind: 'erase', reader: `user:p${producer}` }]);
  console.log(`erased user:p${producer} (${followers[producer].length} followers) in ${(performance.now() - erasing).toFixed(1)} ms`);
}
