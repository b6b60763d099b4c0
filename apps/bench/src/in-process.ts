import { decodeFeedEvents, sortKeyOf, type Activity, type FeedId } from '@feedmill/contracts';
import type { EventLog } from '@feedmill/event-log';
import { fanOutBatch, FollowerIndex, type PlanLookups } from '@feedmill/feed-models';
import { MemoryContentStore, MemoryGraphStore, MemoryTimelineStore } from '@feedmill/stores';
import { readAllEvents } from '@feedmill/harness';
import { Latencies } from './latency.js';
import { round } from './deployment.js';
import { measureTransportFanout, type TransportFanoutResult } from './transport-fanout.js';
import type { Workload } from './workload.js';

const CAP = 800;
const PAGE = 25;
const BATCH = 512;

export interface InProcessResults {
  events: number;
  readLogSeconds: number;
  projectionRebuild: { seconds: number; eventsPerSecond: number };
  /** Our fan-out with no transport: planning and applying deliveries to memory timelines. */
  fanoutInProcess: { deliveries: number; seconds: number; deliveriesPerSecond: number };
  /** Ours against the naive version through the deployment's transport. */
  fanout: TransportFanoutResult;
  reads: {
    ours: { latencyMs: ReturnType<Latencies['summary']>; readsPerSecond: number };
    naive: { latencyMs: ReturnType<Latencies['summary']>; readsPerSecond: number };
    speedup: number;
    samples: { ours: number[]; naive: number[] };
  };
  memory: {
    bytesPerFollowEdge: number | null;
    /** The timeline store's own bytes per stored entry, the activity objects it serves counted apart. */
    bytesPerTimelineEntry: number | null;
    /** How {@link bytesPerTimelineEntry} is measured, for the report's label. */
    timelineEntryMethod: string;
    note?: string;
  };
}

const TIMELINE_ENTRY_METHOD = 'heap and array buffers after GC with the timeline store, less with only the activity objects its timelines serve';

const gc = (globalThis as { gc?: () => void }).gc;
/** The JS heap and the array buffers outside it (typed arrays keep their contents there), after a full GC. */
function heapAfterGc(): number | null {
  if (!gc) return null;
  gc();
  gc();
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.arrayBuffers;
}

/**
 * Replays the deployment's log into fresh stores in this process, and measures what HTTP
 * hides: projection rebuild speed, fan-out throughput, read latency, memory. Beside ours it
 * runs the naive version a team writes first, on the same data: fan-out as one awaited
 * write per follower (through the deployment's transport), and reads that query every
 * followed feed (in-process, so that ratio leaves out a round trip per followed feed).
 */
export async function measureInProcess(
  log: EventLog,
  workload: Workload,
  natsUrl: string | undefined,
  progress: (phase: string) => void,
): Promise<InProcessResults> {
  progress('reading the log');
  let started = performance.now();
  const events = await readAllEvents(log);
  const readLogSeconds = (performance.now() - started) / 1000;

  progress('rebuilding projections');
  const baseline = heapAfterGc();
  const graph = new MemoryGraphStore();
  started = performance.now();
  await graph.apply(events);
  const graphSeconds = (performance.now() - started) / 1000;
  const afterGraph = heapAfterGc();
  const content = new MemoryContentStore();
  started = performance.now();
  await content.apply(events);
  const rebuildSeconds = graphSeconds + (performance.now() - started) / 1000;
  const edges = workload.edges.length;

  progress('fan-out: ours');
  const lookups: PlanLookups = {
    recent: (feed, limit, _atLeast, atMost, order, since) => content.recent([feed], undefined, limit, atMost, order, since === undefined ? undefined : [{ feed, since }]),
    isTimeline: (feed) => feed.startsWith('timeline:'),
    capOf: () => CAP,
    orderOf: () => 'time',
    activities: (ids) => content.get(ids),
    positions: (ids) => content.positionsOf(ids),
    follows: (follower, target) => graph.isFollowing(follower, target),
  };
  let timeline: MemoryTimelineStore | undefined = new MemoryTimelineStore(() => ({ model: 'ring', cap: CAP, inactivityMs: 0 }));
  started = performance.now();
  let position = 0;
  const followers = new FollowerIndex();
  for (let i = 0; i < events.length; i += BATCH) {
    const batch = events.slice(i, i + BATCH);
    const last = batch[batch.length - 1]!.position;
    await fanOutBatch(decodeFeedEvents(batch), followers, lookups, timeline, position, last);
    position = last;
  }
  const oursSeconds = (performance.now() - started) / 1000;
  const counters = await timeline.counters();

  progress(`fan-out through the ${natsUrl === undefined ? 'in-process' : 'NATS'} transport: ours and naive`);
  const fanout = await measureTransportFanout(events, lookups, natsUrl, workload.profile.baselineDeliveries);

  progress('reads: ours and naive');
  const followingOf = (reader: FeedId) => graph.following(reader, undefined, 100_000);
  const ours = new Latencies();
  const naiveReads = new Latencies();
  const readers = Array.from({ length: workload.profile.inProcessReads }, () => workload.readers[workload.nextReader()]! as FeedId);
  let oursTotal = 0;
  for (const reader of readers) {
    const t = performance.now();
    await timeline.readPage(reader, undefined, PAGE, async (before, limit) => content.recent(await followingOf(reader), before, limit));
    const ms = performance.now() - t;
    oursTotal += ms;
    ours.recordMs(ms);
  }
  let naiveTotal = 0;
  for (const reader of readers) {
    const t = performance.now();
    await naiveRead(reader, followingOf, (feed) => content.recent([feed], undefined, PAGE));
    const ms = performance.now() - t;
    naiveTotal += ms;
    naiveReads.recordMs(ms);
  }

  progress('memory of the timelines');
  // The activity objects the timelines serve (the same objects the content store may hold
  // too) are kept alive while the store is dropped: what the heap loses is the store's own.
  const served = new Set<object>();
  for (const reader of workload.readers) for (const item of (await timeline.readPage(reader as FeedId, undefined, CAP, async () => [])).items) served.add(item);
  const withStore = heapAfterGc();
  // Read after the measurement, so that the store is live during it.
  const { entries } = await timeline.counters();
  const dropped = new WeakRef(timeline);
  timeline = undefined;
  // Measured once the store is gone: a promise or timer of its own may hold it past one turn.
  for (let turn = 0; turn < 20 && dropped.deref() !== undefined; turn++) {
    await new Promise((settle) => setTimeout(settle, 10));
    heapAfterGc();
  }
  const servedOnly = dropped.deref() === undefined ? heapAfterGc() : null;
  const perEntry = withStore !== null && servedOnly !== null && served.size > 0 && entries > 0 ? round((withStore - servedOnly) / entries, 1) : null;

  const perEdge = baseline !== null && afterGraph !== null ? Math.round((afterGraph - baseline) / Math.max(1, edges)) : null;
  const oursPerSecond = counters.delivered / oursSeconds;
  return {
    events: events.length,
    readLogSeconds: round(readLogSeconds, 2),
    projectionRebuild: { seconds: round(rebuildSeconds, 3), eventsPerSecond: Math.round(events.length / rebuildSeconds) },
    fanoutInProcess: { deliveries: counters.delivered, seconds: round(oursSeconds, 2), deliveriesPerSecond: Math.round(oursPerSecond) },
    fanout,
    reads: {
      ours: { latencyMs: ours.summary(), readsPerSecond: Math.round(readers.length / (oursTotal / 1000)) },
      naive: { latencyMs: naiveReads.summary(), readsPerSecond: Math.round(readers.length / (naiveTotal / 1000)) },
      speedup: round(naiveTotal / oursTotal, 2),
      samples: { ours: ours.samples(), naive: naiveReads.samples() },
    },
    memory: {
      bytesPerFollowEdge: perEdge,
      bytesPerTimelineEntry: perEntry,
      timelineEntryMethod: TIMELINE_ENTRY_METHOD,
      ...(gc ? {} : { note: 'run node with --expose-gc to measure memory' }),
    },
  };
}

/** Read-time materialization: ask every followed feed for its newest page, then merge. */
async function naiveRead(reader: FeedId, followingOf: (reader: FeedId) => Promise<FeedId[]>, recentOf: (feed: FeedId) => Promise<Activity[]>) {
  const pages: Activity[][] = [];
  for (const feed of await followingOf(reader)) pages.push(await recentOf(feed));
  return pages
    .flat()
    .sort((a, b) => (sortKeyOf(a) < sortKeyOf(b) ? 1 : -1))
    .slice(0, PAGE);
}
