// Measures the cost of sealing an activity's content on append and opening it on read
// (XChaCha20-Poly1305 with a key derived from the feed's, one box per activity), in one process, after
// `npm run build`. Prints microseconds per activity, the best of several rounds.
// Usage: node scripts/seal-throughput.mjs [--activities 200000] [--rounds 5]
import { parseArgs } from 'node:util';
import { newFeedKey, openEventData, sealEventData } from '@feedmill/event-log';

const { values } = parseArgs({ options: { activities: { type: 'string', default: '200000' }, rounds: { type: 'string', default: '5' } } });
const count = Number(values.activities);
const key = newFeedKey('user:bob');
const activity = {
  id: '0b9f5c1e-6f0c-4a44-8d0e-6f3d5c2b1a77',
  feed: 'user:bob',
  actor: 'bob',
  verb: 'post',
  object: 'photo:1',
  time: '2026-01-01T00:00:00.000Z',
  extra: { text: 'a short post of a few words' },
};
let bestSeal = Infinity;
let bestOpen = Infinity;
for (let round = 0; round < Number(values.rounds); round++) {
  let started = performance.now();
  const sealed = new Array(count);
  for (let i = 0; i < count; i++) sealed[i] = sealEventData('ActivityAdded', { activity }, () => key);
  bestSeal = Math.min(bestSeal, ((performance.now() - started) * 1000) / count);
  started = performance.now();
  for (let i = 0; i < count; i++) openEventData('ActivityAdded', sealed[i], () => key);
  bestOpen = Math.min(bestOpen, ((performance.now() - started) * 1000) / count);
}
console.log(`seal ${bestSeal.toFixed(2)} µs, open ${bestOpen.toFixed(2)} µs per activity (best of ${values.rounds} rounds of ${count})`);
