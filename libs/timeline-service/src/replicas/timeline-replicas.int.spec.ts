import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { FeedGroups } from '@feedmill/config';
import { feedConfigSchema, feedEvents, subjects, type Activity, type DeliverRequest, type FeedConfig, type FeedId } from '@feedmill/contracts';
import { FileEventLog, type EventLog } from '@feedmill/event-log';
import { stubServiceClient, waitFor } from '@feedmill/harness';
import { memoryStores } from '@feedmill/runtime';
import { MemoryTimelineStore } from '@feedmill/stores';
import type { MessageLink } from '@feedmill/transport';
import { TimelineService } from '../timeline.service.js';
import { isReplicaMessage, type ReplicaMessage } from './replica-messages.js';
import { CopyReadingClient, TimelineCopy } from './timeline-copy.js';
import { TimelineReplicas } from './timeline-replicas.js';

/**
 * The services' process (a real timeline service on a memory store, with its replicas) and
 * an HTTP worker's copy, joined by a channel that carries messages as a `node:cluster` IPC
 * channel does: one after another, each in a later turn, as a copy (structured clone).
 */
const config: FeedConfig = feedConfigSchema.parse({
  groups: {
    user: { kind: 'producer' },
    timeline: { kind: 'timeline', model: 'ring', cap: 800 },
    cached: { kind: 'timeline', model: 'cache', cap: 800 },
    mixed: { kind: 'timeline', model: 'hybrid', cap: 800 },
  },
});
const groups = new FeedGroups(config);
const reader = 'timeline:r' as FeedId;
const author = 'user:a' as FeedId;
const activity = (n: number): Activity => ({ id: `a${n}`, feed: author, actor: 'a', verb: 'post', object: `note:${n}`, time: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString() });
const followed: DeliverRequest['deliveries'][number] = { kind: 'follow', reader, target: author, recent: [], exhausted: true };
const posted = (n: number): DeliverRequest['deliveries'][number] => ({ kind: 'insert', readers: [reader], activity: activity(n) });

/** Two ends of a channel; `sent` is what each end sent, `holding` stops an end's messages from arriving until `release`. */
function channel() {
  const end = () => ({ listeners: [] as Array<(message: unknown) => void>, sent: [] as unknown[], holding: false, held: [] as unknown[] });
  const [a, b] = [end(), end()];
  const link = (self: ReturnType<typeof end>, other: ReturnType<typeof end>): MessageLink => ({
    send: (message) => {
      self.sent.push(message);
      const copy = structuredClone(message);
      if (self.holding) self.held.push(copy);
      else setImmediate(() => other.listeners.forEach((listener) => listener(copy)));
    },
    on: (_event, listener) => self.listeners.push(listener),
  });
  const release = (self: ReturnType<typeof end>, other: ReturnType<typeof end>) => {
    self.holding = false;
    for (const message of self.held.splice(0)) other.listeners.forEach((listener) => listener(message));
  };
  return { primary: link(a, b), worker: link(b, a), primaryEnd: a, workerEnd: b, releaseWorker: () => release(b, a) };
}

const replicaMessages = (sent: unknown[], kind: ReplicaMessage['replica']) => sent.filter((m) => isReplicaMessage(m) && m.replica === kind);

let store: MemoryTimelineStore;
let replicas: TimelineReplicas;
let timeline: TimelineService;
let links: ReturnType<typeof channel>;
let copy: TimelineCopy;
let position: number;
let dir: string | undefined;

/** Delivers as fan-out does: each batch starts where the last ended. */
async function deliver(...deliveries: DeliverRequest['deliveries']): Promise<number> {
  const reply = await timeline.deliver({ after: position, position: position + 1, deliveries });
  expect(reply.applied).toBe(true);
  return (position = reply.position);
}

const newTimelineStore = () => new MemoryTimelineStore((feed) => groups.timelinePolicyOf(feed), undefined, groups.fingerprint);
const pageIds = async (read: Promise<{ items: Activity[] }>) => (await read).items.map((a) => a.id);

/** The timeline service over `store`, with `replicas`; given a log, it is caught up once it reaches the log's head. */
async function timelineService(log: EventLog | null = null): Promise<TimelineService> {
  // The stub answers nothing: a read of embedded ring entries asks the other services for nothing.
  const service = new TimelineService(stubServiceClient({}), groups, log as EventLog, { ...memoryStores, timeline: async () => store }, () => config, undefined, undefined, undefined, undefined, undefined, undefined, replicas);
  await service.onModuleInit();
  return service;
}

/** Another worker's copy, on a channel of its own. */
function anotherCopy() {
  const more = channel();
  replicas.serve(more.primary);
  return { copy: new TimelineCopy(more.worker, stubServiceClient({})), links: more };
}

beforeEach(async () => {
  position = 0;
  store = newTimelineStore();
  replicas = new TimelineReplicas();
  timeline = await timelineService();
  links = channel();
  replicas.serve(links.primary);
  copy = new TimelineCopy(links.worker, stubServiceClient({}));
});
afterEach(async () => {
  await timeline.onModuleDestroy();
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = undefined;
});

it('starts from a snapshot of the timelines once they have caught up with the log, then applies every batch the service applies, and reads as the service does', async () => {
  // A log two events long, which the timelines have yet to reach (a start from an older snapshot).
  dir = await mkdtemp(join(tmpdir(), 'feedmill-copies-'));
  const log = await FileEventLog.open({ dir });
  for (const n of [1, 2]) await log.appendToStream(`feed-${author}`, [feedEvents.encode({ type: 'ActivityAdded', data: { activity: activity(n) } })]);
  await timeline.onModuleDestroy();
  timeline = await timelineService(log);
  copy.join();
  await deliver(followed);
  await nextTurn();
  await nextTurn();
  // Behind the log: no snapshot, and reads go to the services.
  expect(replicaMessages(links.primaryEnd.sent, 'snapshot')).toHaveLength(0);
  expect(copy.answers(reader)).toBe(false);

  await deliver(posted(1));
  await log.close();
  await waitFor(async () => (await copy.position()) === 2 || undefined, { what: 'the copy to restore' });
  for (let n = 2; n <= 5; n++) await deliver(posted(n));
  await waitFor(async () => (await copy.position()) === 6 || undefined, { what: 'the copy to apply the batches' });
  expect(copy.answers(reader)).toBe(true);
  expect(await pageIds(copy.read({ feed: reader, limit: 10 }))).toEqual(['a5', 'a4', 'a3', 'a2', 'a1']);
  expect(await pageIds(copy.read({ feed: reader, limit: 10 }))).toEqual(await pageIds(timeline.read({ feed: reader, limit: 10 })));
  expect(replicaMessages(links.primaryEnd.sent, 'snapshot')).toHaveLength(1);
  // Batches of one turn travel as one message.
  expect(replicaMessages(links.primaryEnd.sent, 'deliver').length).toBeLessThanOrEqual(4);
});

it('answers a wait for a position only once the copy has it, and says not reached when the copy does not answer in time', async () => {
  copy.join();
  await waitFor(async () => (await copy.position()) === 0 || undefined, { what: 'the copy to restore' });
  await waitFor(() => replicas.behind(0) === 0 || undefined, { what: 'the copy to say where it stands' });

  links.workerEnd.holding = true;
  const at = await deliver(followed, posted(1));
  expect(await timeline.reach(at, 200)).toEqual({ reached: false, position: at });
  expect((await timeline.status()).counters).toMatchObject({ replicas: 1, replicasBehind: 1 });

  const waiting = timeline.reach(at, 5_000);
  links.releaseWorker();
  expect(await waiting).toEqual({ reached: true, position: at });
  expect((await timeline.status()).counters).toMatchObject({ replicas: 1, replicasBehind: 0 });
});

it('skips a batch its snapshot holds, and starts over from a new snapshot when a batch would leave a gap or the service asks', async () => {
  await deliver(followed);
  copy.join();
  await waitFor(async () => (await copy.position()) === 1 || undefined, { what: 'the copy to restore' });

  // Announced after the snapshot (its caller resumed late): already in the copy.
  replicas.applied(store, { after: 0, position: 1, deliveries: [followed] });
  await deliver(posted(1));
  await waitFor(async () => (await copy.position()) === 2 || undefined, { what: 'the next batch' });
  expect(replicaMessages(links.workerEnd.sent, 'join')).toHaveLength(1);

  // A batch from beyond where the copy stands: one was lost on the way.
  replicas.applied(store, { after: 7, position: 8, deliveries: [posted(8)] });
  await waitFor(() => replicaMessages(links.primaryEnd.sent, 'snapshot').length === 2 || undefined, { what: 'a second snapshot' });
  await waitFor(async () => (await copy.position()) === 2 || undefined, { what: 'the copy to restore again' });
  expect(await pageIds(copy.read({ feed: reader, limit: 10 }))).toEqual(['a1']);

  // The service's store replaced (a rebuild): the copy takes the new one whole.
  const rebuilt = newTimelineStore();
  await rebuilt.deliver({ after: 0, position: 3, deliveries: [followed, posted(1), posted(2)] });
  replicas.bind(() => ({ store: rebuilt, config }));
  replicas.startOver();
  await waitFor(async () => (await copy.position()) === 3 || undefined, { what: 'the copy of the rebuilt store' });
  expect(await pageIds(copy.read({ feed: reader, limit: 10 }))).toEqual(['a2', 'a1']);
});

it('leaves to the services the reads of timelines whose reads decide what is pushed (hybrid), those routed to a partition, and every read before the copy is in', async () => {
  const asked: string[] = [];
  const services = stubServiceClient({
    [subjects.timeline.read]: async (request) => {
      asked.push(`${subjects.timeline.read} ${request.feed}`);
      return { items: [], next: null, newest: null };
    },
  });
  const reading = new CopyReadingClient(services, copy);
  await deliver(followed, posted(1));
  await reading.requestPage(subjects.timeline.read, { feed: reader, limit: 10 });
  copy.join();
  await waitFor(async () => (await copy.position()) === 1 || undefined, { what: 'the copy to restore' });

  const page = await reading.requestPage(subjects.timeline.read, { feed: reader, limit: 10 });
  expect(JSON.parse(`[${page.itemsJson}]`).map((a: Activity) => a.id)).toEqual(['a1']);
  expect(copy.answers('cached:r' as FeedId)).toBe(true);
  await reading.requestPage(subjects.timeline.read, { feed: 'mixed:r' as FeedId, limit: 10 });
  await reading.request(subjects.timeline.read, { feed: reader, limit: 10 }, { partition: 0 });
  expect(asked).toEqual([`${subjects.timeline.read} ${reader}`, `${subjects.timeline.read} mixed:r`, `${subjects.timeline.read} ${reader}`]);
});

it('builds a cache from the services at its first read, as of at least where the copy stands, then keeps it from the batches', async () => {
  const pulls: string[] = [];
  const older = activity(0);
  const services = stubServiceClient({
    [subjects.graph.edgeBounds]: async (request) => {
      pulls.push(`${subjects.graph.edgeBounds} atLeast=${request.atLeast}`);
      return { bounds: [] };
    },
    [subjects.graph.following]: async (request) => {
      pulls.push(`${subjects.graph.following} atLeast=${request.atLeast}`);
      return { items: [author], next: null };
    },
    [subjects.content.recent]: async (request) => {
      pulls.push(`${subjects.content.recent} atLeast=${request.atLeast}`);
      return { items: [older], next: null, newest: null };
    },
  });
  copy = new TimelineCopy(links.worker, services);
  const cachedReader = 'cached:r' as FeedId;
  await deliver({ kind: 'follow', reader: cachedReader, target: author, recent: [], exhausted: true });
  copy.join();
  await waitFor(async () => (await copy.position()) === 1 || undefined, { what: 'the copy to restore' });

  expect(await pageIds(copy.read({ feed: cachedReader, limit: 10 }))).toEqual(['a0']);
  expect(pulls.length).toBeGreaterThanOrEqual(3);
  expect(pulls.every((line) => line.endsWith('atLeast=1'))).toBe(true);
  await deliver({ kind: 'insert', readers: [cachedReader], activity: activity(1) });
  await waitFor(async () => (await copy.position()) === 2 || undefined, { what: 'the batch' });
  const pulled = pulls.length;
  expect(await pageIds(copy.read({ feed: cachedReader, limit: 10 }))).toEqual(['a1', 'a0']);
  expect(pulls).toHaveLength(pulled);
});

it('sends copies that ask at once, amid batches, one snapshot, and each then gets every batch', async () => {
  await deliver(followed);
  const second = anotherCopy();
  copy.join();
  second.copy.join();
  for (let n = 1; n <= 20; n++) await deliver(posted(n));
  for (const each of [copy, second.copy]) await waitFor(async () => (await each.position()) === 21 || undefined, { what: 'both copies to apply every batch' });
  expect(await pageIds(second.copy.read({ feed: reader, limit: 25 }))).toEqual(await pageIds(timeline.read({ feed: reader, limit: 25 })));
  expect(await pageIds(copy.read({ feed: reader, limit: 25 }))).toEqual(await pageIds(timeline.read({ feed: reader, limit: 25 })));
  // Neither started over: one join each.
  expect([links.workerEnd.sent, second.links.workerEnd.sent].map((sent) => replicaMessages(sent, 'join').length)).toEqual([1, 1]);
});

it('takes the store that replaced the one being copied: a snapshot begun before the swap is not sent', async () => {
  // Enough timelines that the snapshot takes several turns (ROWS_PER_STEP each).
  const readers = Array.from({ length: 5_000 }, (_, i) => `timeline:r${i}` as FeedId);
  await deliver(...readers.map((each) => ({ kind: 'follow' as const, reader: each, target: author, recent: [], exhausted: true })), posted(1));
  copy.join();
  await waitFor(() => (links.workerEnd.sent.length > 0 ? true : undefined), { what: 'the join to be sent' });
  await nextTurn();
  await nextTurn();
  // The snapshot is under way: the store holds its writes.
  let heldWriteApplied = false;
  void store.deliver({ after: position, position, deliveries: [] }).then(() => (heldWriteApplied = true));
  for (let tick = 0; tick < 10; tick++) await Promise.resolve();
  expect(heldWriteApplied).toBe(false);
  const rebuilt = newTimelineStore();
  await rebuilt.deliver({ after: 0, position: 1, deliveries: [followed, posted(1), posted(2)] });
  replicas.bind(() => ({ store: rebuilt, config }));
  replicas.startOver();

  await waitFor(async () => (await copy.position()) !== undefined || undefined, { what: 'a snapshot' });
  expect(await pageIds(copy.read({ feed: reader, limit: 10 }))).toEqual(['a2', 'a1']);
  expect(await copy.position()).toBe(1);
  expect(replicaMessages(links.primaryEnd.sent, 'snapshot')).toHaveLength(1);
});
