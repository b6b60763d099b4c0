// What a timeline page costs the cluster's gateway to take from its NATS reply, the two ways
// it is asked: as objects (`feed.timeline.read`: parse the message, check every activity,
// write the items as JSON) and as the timeline process wrote it (`feed.timeline.read-written`:
// parse the message, check its shape); and what writing each reply costs the timeline process.
// A 20-activity page, --replies times each way, three rounds. After `npm run build`.
// Usage: node scripts/page-reply-cost.mjs [--replies 200000]
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { subjects, wire } from '@feedmill/contracts';
import { writeArrivedPage, writeHeldPage } from '@feedmill/transport';

const { values } = parseArgs({ options: { replies: { type: 'string', default: '200000' } } });
const replies = Number(values.replies);
const items = Array.from({ length: 20 }, (_, i) => ({ id: randomUUID(), feed: `user:p${i}`, actor: `user:p${i}`, verb: 'post', object: `post:${i}-${'x'.repeat(100)}`, time: new Date(Date.UTC(2026, 0, 1, 0, i)).toISOString() }));
const page = { items, next: null, newest: null };
/** The reply as Nest's NATS server sends it. */
const message = (response) => JSON.stringify({ id: '1', response, isDisposed: true });
const checked = (subject, reply) => {
  if (!wire[subject].replyCheck.safeParse(reply).success) throw new Error(`${subject}: a malformed reply`);
  return reply;
};
const ways = {
  objects: { text: message(page), take: (reply) => writeArrivedPage(checked(subjects.timeline.read, reply)), write: () => message(page) },
  written: { text: message(writeHeldPage(page)), take: (reply) => checked(subjects.timeline.readWritten, reply), write: () => message(writeHeldPage(page)) },
};
const microseconds = (started) => Math.round(((performance.now() - started) * 1000 * 100) / replies) / 100;
for (let round = 1; round <= 3; round++) {
  for (const [way, { text, take, write }] of Object.entries(ways)) {
    let started = performance.now();
    let bytes = 0;
    for (let i = 0; i < replies; i++) bytes += take(JSON.parse(text).response).itemsJson.length;
    const gateway = microseconds(started);
    started = performance.now();
    for (let i = 0; i < replies; i++) bytes += write().length;
    console.log(JSON.stringify({ round, way, gatewayMicrosecondsPerReply: gateway, timelineMicrosecondsPerReply: microseconds(started), bytes }));
  }
}
