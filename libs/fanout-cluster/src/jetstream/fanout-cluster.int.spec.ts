import { connect } from '@nats-io/transport-node';
import { Kvm } from '@nats-io/kv';
import type { DeliverRequest, FeedId } from '@feedmill/contracts';
import { startNatsServer, waitFor, type NatsServerHandle } from '@feedmill/harness';
import type { FanoutCluster, JobDelivery, JobWorker } from '../fanout-cluster.port.js';
import { connectFanoutCluster } from './connect-fanout-cluster.js';

let server: NatsServerHandle;
let logCounter = 0;
let currentLog = '';
const opened: FanoutCluster[] = [];
const workers: JobWorker[] = [];
const warnings: string[] = [];

beforeAll(async () => {
  server = await startNatsServer();
});
afterEach(async () => {
  await Promise.all(workers.splice(0).map((worker) => worker.stop().catch(() => undefined)));
  await Promise.all(opened.splice(0).map(async (cluster) => {
    await cluster.election.stop().catch(() => undefined);
    await cluster.close().catch(() => undefined);
  }));
  warnings.splice(0);
});
afterAll(async () => {
  await server.stop();
});

const JOB_LEASE_MS = 600;
const PLANNER_LEASE_MS = 900;

/** Fan-out processes of one log: each opens the cluster on its own connection. */
async function processesOf(count: number, options: { jobPollMs?: number } = {}): Promise<FanoutCluster[]> {
  const logStream = (currentLog = `LOG${++logCounter}`);
  const clusters: FanoutCluster[] = [];
  for (let i = 0; i < count; i++) {
    const cluster = await connectFanoutCluster({ servers: server.url, logStream, jobLeaseMs: JOB_LEASE_MS, plannerLeaseMs: PLANNER_LEASE_MS, ...options, warn: (message) => warnings.push(message) });
    opened.push(cluster);
    clusters.push(cluster);
  }
  return clusters;
}

function jobs(count: number, fence = 9): DeliverRequest[] {
  return Array.from({ length: count }, (_, i) => ({
    after: fence,
    position: fence,
    deliveries: [{ kind: 'remove', readers: [`timeline:r${i}` as FeedId], id: `a${i}` }],
  }));
}

const readerOf = (job: DeliverRequest) => (job.deliveries[0] as { readers: readonly string[] }).readers[0]!;
const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

describe('JetStream job queue', () => {
  it('stops a worker waiting for a job at once when the server is gone', async () => {
    const gone = await startNatsServer();
    const cluster = await connectFanoutCluster({ servers: gone.url, logStream: 'GONE', warn: () => undefined });
    try {
      const worker = cluster.jobs.work(async () => undefined);
      await pause(200);
      await gone.kill();
      await pause(100);
      const started = Date.now();
      // nats.js ends the worker's pull only once the connection is back: stop waited for that.
      const stopped = await Promise.race([worker.stop().then(() => true), pause(10_000).then(() => false)]);
      expect(stopped).toBe(true);
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      await cluster.close();
      await gone.stop();
    }
  });

  it('leaves no applied job’s bytes in the stream’s files: each is deleted with erase once applied', async () => {
    const [planner] = await processesOf(1);
    const marker = `JOBMARK${Date.now()}x${Math.random().toString(36).slice(2)}`;
    const job: DeliverRequest = {
      after: 9,
      position: 9,
      deliveries: [{ kind: 'insert', readers: ['timeline:r' as FeedId], activity: { id: 'a1', feed: 'user:a', actor: 'a', verb: 'post', object: marker, time: '2026-01-01T00:00:00.000Z' } }],
    };
    await planner!.jobs.publish(10, [job], 'run1');
    // A job that keeps failing stays in the same block file: the block is not dropped whole.
    await planner!.jobs.publish(11, jobs(1), 'run1');
    const holds = async () => {
      const { readdir, readFile } = await import('node:fs/promises');
      const { join } = await import('node:path');
      for (const entry of await readdir(server.storeDir, { withFileTypes: true, recursive: true })) {
        if (entry.isFile() && (await readFile(join(entry.parentPath, entry.name))).includes(marker)) return true;
      }
      return false;
    };
    expect(await holds()).toBe(true);
    const applied: string[] = [];
    workers.push(
      planner!.jobs.work(async (one, delivery) => {
        if (delivery.position !== 10) throw new Error('not now');
        applied.push((one.deliveries[0] as { activity: { object: string } }).activity.object);
      }),
    );
    await waitFor(async () => ((await planner!.jobs.remaining(10)) === 0 ? true : undefined), { what: 'the job Done' });
    expect(applied).toEqual([marker]);
    await waitFor(async () => ((await holds()) ? undefined : true), { what: 'the job’s bytes gone from the store', timeoutMs: 5_000 });
  });

  it('shares an event’s jobs between workers, each applied once, and counts what is not Done', async () => {
    const [planner, other] = await processesOf(2);
    await planner!.jobs.publish(10, jobs(20), 'run1');
    await planner!.jobs.publish(11, jobs(3), 'run1');
    expect(await planner!.jobs.remaining(10)).toBe(20);
    expect(await planner!.jobs.remaining(11)).toBe(3);
    expect(await planner!.jobs.remaining(12)).toBe(0);

    const applied: Array<{ by: string; reader: string; delivery: JobDelivery }> = [];
    const worker = (by: string) => async (job: DeliverRequest, delivery: JobDelivery) => {
      await pause(5);
      applied.push({ by, reader: readerOf(job), delivery });
    };
    expect(await planner!.jobs.idleWorkers()).toBe(0);
    workers.push(planner!.jobs.work(worker('a')), other!.jobs.work(worker('b')));
    await waitFor(async () => ((await planner!.jobs.remaining(10)) + (await planner!.jobs.remaining(11)) === 0 ? true : undefined), { what: 'every job Done' });
    // With nothing left to do, both wait for the next job.
    await waitFor(async () => ((await planner!.jobs.idleWorkers()) === 2 ? true : undefined), { what: 'two idle workers' });

    expect(applied).toHaveLength(23);
    const ofTen = applied.filter((a) => a.delivery.position === 10);
    expect(ofTen.map((a) => a.reader).sort()).toEqual(jobs(20).map(readerOf).sort());
    expect(ofTen.map((a) => a.delivery.chunk).sort((x, y) => x - y)).toEqual([...Array(20).keys()]);
    expect(new Set(applied.map((a) => a.by))).toEqual(new Set(['a', 'b']));
    expect(applied.every((a) => a.delivery.attempt === 1)).toBe(true);
  });

  it('waits until an event’s jobs are done; stops on abort, and fails when they stall', async () => {
    const [planner, other] = await processesOf(2);
    await planner!.jobs.publish(4, jobs(6), 'run1');
    const never = new AbortController().signal;
    const aborting = new AbortController();
    const stopped = planner!.jobs.untilDone(4, { stallMs: 60_000, signal: aborting.signal });
    aborting.abort();
    expect(await stopped).toBe(false);
    await expect(planner!.jobs.untilDone(4, { stallMs: 150, signal: never })).rejects.toMatchObject({ name: 'JobsStalledError', position: 4, remaining: 6 });
    workers.push(other!.jobs.work(() => pause(10)));
    expect(await planner!.jobs.untilDone(4, { stallMs: 60_000, signal: never })).toBe(true);
    expect(await planner!.jobs.remaining(4)).toBe(0);
  });

  it('takes back every job of an event not done, of every run that published it, and no worker gets one after', async () => {
    const [planner, other] = await processesOf(2);
    await planner!.jobs.publish(7, jobs(3), 'run1');
    await planner!.jobs.publish(7, jobs(3), 'run2');
    await planner!.jobs.publish(8, jobs(2), 'run1');
    expect(await planner!.jobs.withdraw(7)).toBe(6);
    expect(await planner!.jobs.remaining(7)).toBe(0);
    expect(await planner!.jobs.withdraw(7)).toBe(0);
    // Taken back is not forgotten: the same jobs published again under a name used before are
    // dropped as duplicates (which is why the planner names its jobs anew after a withdrawal).
    await planner!.jobs.publish(7, jobs(3), 'run2');
    expect(await planner!.jobs.remaining(7)).toBe(0);
    await planner!.jobs.publish(7, jobs(3), 'run3');
    const applied: number[] = [];
    workers.push(other!.jobs.work(async (_job, delivery) => void applied.push(delivery.position)));
    await waitFor(async () => ((await planner!.jobs.remaining(7)) + (await planner!.jobs.remaining(8)) === 0 ? true : undefined), { what: 'the jobs left Done' });
    expect(applied.sort()).toEqual([7, 7, 7, 8, 8]);
  });

  it('wakes a wait with the workers’ word that a job is done, not at its next poll', async () => {
    const pollMs = 30_000;
    const [planner, other] = await processesOf(2, { jobPollMs: pollMs });
    await planner!.jobs.publish(4, jobs(6), 'run1');
    workers.push(other!.jobs.work(() => pause(20)));
    const started = Date.now();
    expect(await planner!.jobs.untilDone(4, { stallMs: 60_000, signal: new AbortController().signal })).toBe(true);
    // Six jobs of 20 ms: woken by a poll it would have taken 30 s.
    expect(Date.now() - started).toBeLessThan(pollMs / 2);
  });

  it('queues nothing new when a run publishes the same jobs again, and queues them again for another run', async () => {
    const [planner] = await processesOf(1);
    await planner!.jobs.publish(5, jobs(4), 'run1');
    await planner!.jobs.publish(5, jobs(4), 'run1');
    expect(await planner!.jobs.remaining(5)).toBe(4);
    await planner!.jobs.publish(5, jobs(4), 'run2');
    expect(await planner!.jobs.remaining(5)).toBe(8);
  });

  it('gives a job back when applying it fails, and hands it out again', async () => {
    const [planner] = await processesOf(1);
    await planner!.jobs.publish(3, jobs(1), 'run1');
    const attempts: number[] = [];
    workers.push(
      planner!.jobs.work(async (_job, { attempt }) => {
        attempts.push(attempt);
        if (attempt === 1) throw new Error('timeline did not answer');
      }),
    );
    await waitFor(async () => ((await planner!.jobs.remaining(3)) === 0 ? true : undefined), { what: 'the job Done' });
    expect(attempts).toEqual([1, 2]);
  });

  it('hands a dead worker’s job to another once its lease runs out', async () => {
    const [dying, survivor] = await processesOf(2);
    await dying!.jobs.publish(7, jobs(1), 'run1');
    let held!: () => void;
    let release!: () => void;
    const holding = new Promise<void>((resolve) => (held = resolve));
    const released = new Promise<void>((resolve) => (release = resolve));
    workers.push(dying!.jobs.work(() => (held(), released)));
    await holding;
    // Dead: its connection is gone, so its lease is renewed no more.
    await dying!.close();
    const taken: JobDelivery[] = [];
    workers.push(survivor!.jobs.work(async (_job, delivery) => void taken.push(delivery)));
    await waitFor(async () => ((await survivor!.jobs.remaining(7)) === 0 ? true : undefined), { what: 'the dead worker’s job Done' });
    expect(taken).toEqual([{ position: 7, chunk: 0, attempt: 2 }]);
    release();
  });

  it('keeps a job with a worker that renews its lease, however long it takes', async () => {
    const [slow, other] = await processesOf(2);
    await slow!.jobs.publish(8, jobs(1), 'run1');
    const attempts: string[] = [];
    let held!: () => void;
    const holding = new Promise<void>((resolve) => (held = resolve));
    workers.push(
      slow!.jobs.work(async (_job, { attempt }) => {
        attempts.push(`slow ${attempt}`);
        held();
        await pause(JOB_LEASE_MS * 4);
      }),
    );
    await holding;
    workers.push(other!.jobs.work(async (_job, { attempt }) => void attempts.push(`other ${attempt}`)));
    await waitFor(async () => ((await slow!.jobs.remaining(8)) === 0 ? true : undefined), { what: 'the slow job Done', timeoutMs: 15_000 });
    expect(attempts).toEqual(['slow 1']);
  });
});

describe('KV planner election', () => {
  type Events = string[];
  const campaign = (cluster: FanoutCluster, name: string, events: Events) =>
    cluster.election.campaign({ elected: () => void events.push(`${name} elected`), deposed: () => void events.push(`${name} deposed`) });

  it('elects one process; another takes over at once when it stops, and its record tells who plans and whether it caught up', async () => {
    const [a, b] = await processesOf(2);
    const events: Events = [];
    campaign(a!, 'a', events);
    await waitFor(() => (events.length > 0 ? true : undefined), { what: 'an election' });
    campaign(b!, 'b', events);
    await pause(PLANNER_LEASE_MS * 1.5);
    expect(events).toEqual(['a elected']);
    expect(await b!.election.planner()).toMatchObject({ pid: process.pid, caughtUp: false });
    await a!.election.report(true);
    expect(await b!.election.planner()).toMatchObject({ caughtUp: true });

    const stopped = Date.now();
    await a!.election.stop();
    await waitFor(() => (events.includes('b elected') ? true : undefined), { what: 'b elected' });
    // At its next turn, not after the lease ran out.
    expect(Date.now() - stopped).toBeLessThan(PLANNER_LEASE_MS);
    expect(await a!.election.planner()).toMatchObject({ caughtUp: false });
  });

  it('deposes a planner that finds its lease taken (it stalled past the lease time)', async () => {
    const [a, b] = await processesOf(2);
    const events: Events = [];
    campaign(a!, 'a', events);
    await waitFor(() => (events.includes('a elected') ? true : undefined), { what: 'a elected' });
    // As if a had stalled: its lease is gone and b takes it before a renews.
    const nc = await connect({ servers: server.url });
    await (await new Kvm(nc).open(`${currentLog}_fanout_planner`)).purge('planner');
    await nc.close();
    campaign(b!, 'b', events);
    await waitFor(() => (events.includes('a deposed') ? true : undefined), { what: 'a deposed' });
    expect(events).toEqual(['a elected', 'b elected', 'a deposed']);
    expect(warnings).toContain('the planner lease ran out and another process took it');
  });

  it('elects another once a planner that died stops renewing, and the dead one deposes itself', async () => {
    const [a, b] = await processesOf(2);
    const events: Events = [];
    campaign(a!, 'a', events);
    await waitFor(() => (events.includes('a elected') ? true : undefined), { what: 'a elected' });
    const before = (await a!.election.planner())!.id;
    campaign(b!, 'b', events);
    // a's connection drops: it renews no more, and b takes the lease once it runs out.
    await a!.close();
    await waitFor(() => (events.includes('b elected') ? true : undefined), { what: 'b elected', timeoutMs: PLANNER_LEASE_MS * 5 });
    expect(events).toContain('a deposed');
    expect((await b!.election.planner())!.id).not.toBe(before);
  });
});

describe('NATS planner requests', () => {
  it('reaches the planner from another process, carries its errors, and says unavailable when nobody plans', async () => {
    const [planner, worker] = await processesOf(2);
    await expect(worker!.plannerRequests.ask('replay', 1000)).rejects.toMatchObject({ code: 'unavailable' });
    const serving = await planner!.plannerRequests.serve('replay', async () => ({ replayed: 2 }));
    expect(await worker!.plannerRequests.ask('replay', 1000)).toEqual({ replayed: 2 });
    serving.stop();
    const failing = await planner!.plannerRequests.serve('replay', async () => {
      throw new Error('log unreadable');
    });
    await expect(worker!.plannerRequests.ask('replay', 1000)).rejects.toMatchObject({ code: 'internal', message: 'log unreadable' });
    failing.stop();
  });

  it('serves on a stalled link: the planner gets its handle, and answers once the link does', async () => {
    const [planner, worker] = await processesOf(2);
    await server.pause();
    let serving: { stop(): void };
    const started = Date.now();
    try {
      // Before, this waited on nats.js's flush for as long as the link stalled.
      serving = await planner!.plannerRequests.serve('replay', async () => ({ replayed: 3 }));
      expect(Date.now() - started).toBeLessThan(10_000);
    } finally {
      server.resume();
    }
    await waitFor(() => worker!.plannerRequests.ask('replay', 1000).then((answer) => answer, () => undefined), { what: 'the planner answering once the link does' });
    expect(await worker!.plannerRequests.ask('replay', 1000)).toEqual({ replayed: 3 });
    serving.stop();
    await waitFor(() => worker!.plannerRequests.ask('replay', 1000).then(() => undefined, (error: unknown) => error), { what: 'the planner no longer answering' });
  });
});
