import { connect, type Msg, type NatsConnection } from '@nats-io/transport-node';
import { JetStreamEventLog } from '@feedmill/event-log';
import { FeedmillError, subjects, timelinePartitionOf } from '@feedmill/contracts';
import { freePort, readAllEvents, startApp, startNatsServer, waitFor, type NatsServerHandle, type RunningProcess } from '@feedmill/harness';
import { natsClient, type ServiceClient } from '@feedmill/transport';

/**
 * Two timeline replicas, each answering both partitions' subjects in the same queue group,
 * and one of them stopped with SIGTERM while it holds requests that wait longer than its
 * grace period: writes (hidings, which wait for the reader's partition to apply them) and
 * reads (`reach`, which wait for a log position no one delivers). Its partition subjects are
 * drained, so the requests sent after the signal go to the other replica; its waits end at
 * once, so every request it took is answered, before the grace is over; and it exits as soon
 * as it has answered them. No fan-out runs, so no wait ends by itself before its timeout.
 * The graph is the test's own responder on NATS, which holds timeline reads until told, so
 * that the stopping replica is still up, holding reads, while the requests sent after the
 * signal arrive.
 */
const STREAM = 'TIMELINESHUTDOWN';
const PARTITIONS = 2;
const GRACE_MS = 3_000;
/** Longer than the grace: a wait the stop did not end would be cut off. */
const REACH_WAIT_MS = 4_000;
/** Within the grace: what the replica that goes on answers after its wait. */
const LATE_WAIT_MS = 1_000;
const READERS = Array.from({ length: 16 }, (_, index) => `timeline:reader-${index}` as const);

let nats: NatsServerHandle;
let content: RunningProcess | undefined;
const timelines: Array<{ process: RunningProcess; statusUrl: string }> = [];
let client: ServiceClient;
let graph: NatsConnection;

beforeAll(async () => {
  nats = await startNatsServer();
  const env = { NATS_URL: nats.url, LOG: 'jetstream', JETSTREAM_STREAM: STREAM, TIMELINE_PARTITIONS: String(PARTITIONS), SHUTDOWN_GRACE_MS: String(GRACE_MS) };
  content = startApp('content', env);
  for (const name of ['timeline-a', 'timeline-b']) {
    const port = await freePort();
    // Without TIMELINE_REPLICAS each process holds every partition, as with shared (MongoDB) timelines.
    // The `log` level for what a stopping server says it holds.
    timelines.push({ process: startApp('timeline', { ...env, STATUS_PORT: String(port), LOG_LEVEL: 'log' }, name), statusUrl: `http://127.0.0.1:${port}` });
  }
  client = natsClient(nats.url);
  graph = await connect({ servers: nats.url });
  // Each process's status port, not the gateway's API (which the typed client covers): read raw.
  for (const { statusUrl, process } of timelines) {
    await waitFor(async () => ((await fetch(`${statusUrl}/readyz`).catch(() => undefined))?.status === 200 ? true : undefined), { timeoutMs: 20_000, intervalMs: 50, what: `${process.name} /readyz` });
  }
}, 30_000);
afterAll(async () => {
  for (const { process } of timelines) await process.kill();
  await content?.kill();
  await client?.close();
  await graph?.close();
  await nats?.stop();
});

const route = (reader: string) => ({ partition: timelinePartitionOf(reader, PARTITIONS) });

/**
 * A hiding's answer and how long after `since` it came: its position, or none for the
 * retryable refusal (503 `unavailable`) of a timeline that has not applied it yet. Any other
 * failure (a timeout, a cut-off) stays a failure.
 */
async function hidingAnswer(reply: Promise<{ position?: number }>, since: number): Promise<{ position?: number; afterMs: number }> {
  try {
    const { position } = await reply;
    return { position, afterMs: Date.now() - since };
  } catch (error) {
    if (error instanceof FeedmillError && error.code === 'unavailable') return { afterMs: Date.now() - since };
    throw error;
  }
}

/** The request's reply and how long after `since` it came; a failure (a timeout, say) stays a failure. */
async function timed<T>(reply: Promise<T>, since: number): Promise<{ value: T; afterMs: number }> {
  const value = await reply;
  return { value, afterMs: Date.now() - since };
}

it('on SIGTERM drains its partition subjects, answers every request it took within the grace, and exits once it has', async () => {
  await waitFor(
    () => client.request(subjects.content.add, { feed: 'user:author', id: 'hidden-post', receivedAt: new Date(0).toISOString(), activity: { actor: 'author', verb: 'post', object: 'o' } }).catch(() => undefined),
    { timeoutMs: 10_000, intervalMs: 50, what: 'content to answer' },
  );
  // A timeline read asks the graph for the reader's follows first: those asks wait here until released, then find none.
  const noFollows = { [subjects.graph.edgeBounds]: { bounds: [] }, [subjects.graph.following]: { items: [], next: null } };
  const heldAsks: Msg[] = [];
  let released = false;
  const answerAsk = (ask: Msg) => ask.respond(JSON.stringify({ id: (ask.json() as { id: string }).id, response: noFollows[ask.subject as keyof typeof noFollows], isDisposed: true }));
  for (const subject of Object.keys(noFollows)) {
    graph.subscribe(subject, {
      queue: 'feedmill-graph',
      callback: (_error, ask) => {
        if (released) answerAsk(ask);
        else heldAsks.push(ask);
      },
    });
  }
  // A hiding asks whether the reader's owner may read the activity's feed: answered at once, yes.
  graph.subscribe(subjects.graph.mayRead, {
    queue: 'feedmill-graph',
    callback: (_error, ask) => void ask.respond(JSON.stringify({ id: (ask.json() as { id: string }).id, response: { allowed: true }, isDisposed: true })),
  });
  await graph.flush();

  const sent = Date.now();
  const heldReads = READERS.map((reader) => client.request(subjects.timeline.read, { feed: reader, limit: 5 }, route(reader)));
  const reaches = READERS.map((reader) => timed(client.request(subjects.timeline.reach, { position: 1_000_000_000, timeoutMs: REACH_WAIT_MS }, route(reader)), sent));
  const hidings = READERS.map((reader) => hidingAnswer(client.request(subjects.timeline.hide, { feed: reader, id: 'hidden-post', hidden: true, time: new Date(0).toISOString() }, route(reader)), sent));
  // Both replicas have taken their share: a hiding is answered only after its append, and the replies are not yet in.
  await new Promise((settle) => setTimeout(settle, 500));

  const stopping = timelines[0]!.process;
  const exited = new Promise<number>((resolve) => stopping.child.once('exit', () => resolve(Date.now())));
  const signalled = Date.now();
  stopping.child.kill('SIGTERM');
  // Once NATS has its unsubscriptions, it says how many requests it held at the signal.
  const heldAtStop = await waitFor(async () => /stopped taking requests; held (\d+) at the stop/.exec(stopping.output())?.[1], { timeoutMs: GRACE_MS, intervalMs: 5, what: 'the stopping replica to drain its subjects' });
  expect(Number(heldAtStop)).toBeGreaterThan(0);
  const readiness = await fetch(`${timelines[0]!.statusUrl}/readyz`);
  expect({ status: readiness.status, body: await readiness.json() }).toMatchObject({ status: 503, body: { reason: 'stopping' } });
  // Sent while it stops: the other replica answers them, on every partition. A wait the
  // stopping one took would end at once; the other's run their full time.
  const sentWhileStopping = Date.now();
  const readsWhileStopping = READERS.map((reader) => client.request(subjects.timeline.hidden, { feed: reader, limit: 5 }, route(reader)));
  const reachesWhileStopping = READERS.map((reader) => timed(client.request(subjects.timeline.reach, { position: 1_000_000_000, timeoutMs: LATE_WAIT_MS }, route(reader)), sentWhileStopping));

  const lateReached = await Promise.all(reachesWhileStopping);
  for (const { afterMs } of lateReached) expect(afterMs).toBeGreaterThanOrEqual(LATE_WAIT_MS - 50);
  // It was still up meanwhile, holding reads: its subjects were drained, not its connection closed.
  expect(stopping.child.exitCode).toBeNull();
  released = true;
  heldAsks.splice(0).forEach(answerAsk);
  const readsHeld = await Promise.allSettled(heldReads);
  const [reached, hidden, read] = await Promise.all([Promise.allSettled(reaches), Promise.allSettled(hidings), Promise.allSettled(readsWhileStopping)]);
  const exitedAfterMs = (await exited) - signalled;
  expect(stopping.child.exitCode).toBe(0);

  // Every request was answered, none timed out or was cut off.
  expect(reached.filter((reply) => reply.status === 'rejected')).toEqual([]);
  expect(hidden.filter((reply) => reply.status === 'rejected')).toEqual([]);
  expect(read.filter((reply) => reply.status === 'rejected')).toEqual([]);
  expect(readsHeld.filter((reply) => reply.status === 'rejected')).toEqual([]);
  const reachReplies = reached.map((reply) => (reply as PromiseFulfilledResult<Awaited<(typeof reaches)[number]>>).value);
  const hideAnswers = hidden.map((reply) => (reply as PromiseFulfilledResult<Awaited<(typeof hidings)[number]>>).value);
  for (const { value } of reachReplies) expect(value.reached).toBe(false);
  // The stopping replica held some of them when the signal came: it answered those at the stop, long before their wait would have ended.
  const endedByTheStop = reachReplies.filter(({ afterMs }) => afterMs < REACH_WAIT_MS - 1_000);
  expect(endedByTheStop.length).toBeGreaterThan(0);
  // The other replica's waited their time out.
  expect(endedByTheStop.length).toBeLessThan(READERS.length);
  expect(hideAnswers.filter(({ afterMs }) => afterMs < REACH_WAIT_MS - 1_000).length).toBeGreaterThan(0);
  // With nothing left in flight it did not sit out the rest of the grace.
  expect(exitedAfterMs).toBeLessThan(GRACE_MS);

  // Every hiding was appended before its answer (no fan-out runs here, so none was applied:
  // each answer is the retryable "try again"), and each is in the log once; one answered with a
  // position is there at that position.
  const log = await JetStreamEventLog.connect({ servers: nats.url, streamName: STREAM });
  const logged = (await readAllEvents(log)).filter((event) => event.type === 'ActivityHidden').map((event) => [(event.data as { feed: string }).feed, event.position] as const);
  await log.close();
  expect(logged.map(([reader]) => reader).sort()).toEqual([...READERS].sort());
  const loggedAt = new Map(logged);
  for (const [i, answer] of hideAnswers.entries()) if (answer.position !== undefined) expect(answer.position).toBe(loggedAt.get(READERS[i]!));
}, 20_000);
