import { startNatsServer } from '@feedmill/harness';
import { JetStreamEventLog } from '@feedmill/event-log';

const rounds = Number(process.argv[2] ?? 10);
let nats = await startNatsServer();
const writer = await JetStreamEventLog.connect({ servers: nats.url, streamName: 'SUBR' });
const reader = await JetStreamEventLog.connect({ servers: nats.url, streamName: 'SUBR' });
const ev = (i) => ({ type: 'Thing', data: { i, pad: 'x'.repeat(300) } });
let last = 0;
for (let i = 0; i < 2000; i++) last = (await writer.appendToStream('s' + (i % 50), [ev(i)])).position ?? last;
for (let round = 1; round <= rounds; round++) {
  let seen = 0;
  const sub = reader.subscribeToAll({
    from: 0,
    catchUpBatch: 8192,
    onEvents: async (events) => { seen = events[events.length - 1].position; await new Promise((r) => setTimeout(r, 20)); },
    onError: (error, attempt) => console.log(`  onError ${attempt}: ${String(error)}`),
  });
  await new Promise((r) => setTimeout(r, 30 + Math.random() * 300));
  await nats.kill();
  await new Promise((r) => setTimeout(r, 300 + Math.random() * 500));
  nats = await startNatsServer({ port: nats.port, storeDir: nats.storeDir });
  const head = await writer.headPosition().catch(async () => { await new Promise((r) => setTimeout(r, 6000)); return writer.headPosition(); });
  const started = Date.now();
  while (seen < head && Date.now() - started < 150_000) await new Promise((r) => setTimeout(r, 100));
  console.log(`round ${round}: head ${head}, seen ${seen} after ${Date.now() - started} ms${seen < head ? ' STALLED' : ''}`);
  await sub.stop();
  if (seen < head) break;
}
process.exit(0);
