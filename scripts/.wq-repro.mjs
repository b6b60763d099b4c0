import { startNatsServer } from '@feedmill/harness';
import { connectFanoutCluster } from '@feedmill/fanout-cluster';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';

const rounds = Number(process.argv[2] ?? 10);
let nats = await startNatsServer();
const log = 'WQ';
const opts = { servers: nats.url, logStream: log, jobLeaseMs: 2000, warn: (m) => console.log('warn:', m) };
const a = await connectFanoutCluster(opts);
const b = await connectFanoutCluster(opts);
let applied = 0;
const apply = async () => { applied++; await new Promise((r) => setTimeout(r, 1)); };
a.jobs.work(apply); b.jobs.work(apply);
const job = { partition: 0, deliveries: [{ readers: ['timeline:x'], activity: { id: 'a', actor: 'x', verb: 'post', object: 'y'.repeat(400) } }], fence: 1 };
for (let round = 1; round <= rounds; round++) {
  const position = round;
  const jobs = Array.from({ length: 300 }, () => job);
  await a.jobs.publish(position, jobs, `run${round}`);
  await new Promise((r) => setTimeout(r, 20 + Math.random() * 200));
  await nats.kill();
  await new Promise((r) => setTimeout(r, 300));
  nats = await startNatsServer({ port: nats.port, storeDir: nats.storeDir });
  const signal = new AbortController().signal;
  const started = Date.now();
  try {
    for (let t = 0; ; t++) {
      try { await a.jobs.untilDone(position, { stallMs: 15_000, signal }); break; }
      catch (e) { if (String(e).includes('Timeout') && t < 20) { console.log('retry after', String(e)); await new Promise((r) => setTimeout(r, 500)); continue; } throw e; }
    }
    console.log(`round ${round}: done in ${Date.now() - started} ms, applied so far ${applied}`);
  } catch (error) {
    const nc = await connect({ servers: nats.url });
    const jsm = await jetstreamManager(nc);
    const si = await jsm.streams.info(`${log}_FANOUT_JOBS`, { subjects_filter: '>' });
    const ci = await jsm.consumers.info(`${log}_FANOUT_JOBS`, 'workers');
    console.log(`round ${round}: STALLED ${String(error)}`);
    console.log('stream state', JSON.stringify({ ...si.state, subjects: Object.keys(si.state.subjects ?? {}).slice(0, 5) }));
    console.log('consumer', JSON.stringify({ delivered: ci.delivered, ack_floor: ci.ack_floor, num_pending: ci.num_pending, num_ack_pending: ci.num_ack_pending, num_waiting: ci.num_waiting, num_redelivered: ci.num_redelivered }));
    await new Promise((r) => setTimeout(r, 10000));
    const ci2 = await jsm.consumers.info(`${log}_FANOUT_JOBS`, 'workers');
    const si2 = await jsm.streams.info(`${log}_FANOUT_JOBS`);
    console.log('10 s later', JSON.stringify(si2.state), JSON.stringify({ delivered: ci2.delivered, ack_floor: ci2.ack_floor, num_pending: ci2.num_pending, num_ack_pending: ci2.num_ack_pending, num_waiting: ci2.num_waiting }));
    await nc.close();
    break;
  }
}
process.exit(0);
