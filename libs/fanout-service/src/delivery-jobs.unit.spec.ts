import type { Activity, DeliverRequest, FeedId, TimelineDelivery } from '@feedmill/contracts';
import { chunkDeliveries, deliverInOrder, deliveryJobs, type ReadersDelivery } from '@feedmill/feed-models';
import { seededRandom } from '@feedmill/feed-models/testing';
import { MemoryTimelineStore, type TimelinePolicy } from '@feedmill/stores';

/**
 * What chunk jobs rest on: a memory timeline applies a job (a fenced delivery request) in any
 * order and any number of times to the same end as fan-out's own ordered delivery, and
 * refuses it once it has moved past the job's event.
 */
const READERS = 9_000;
const readers = Array.from({ length: READERS }, (_, i) => `timeline:r${i}` as FeedId);
const activity = (id: string, second: number): Activity => ({ id, feed: 'user:star', actor: 'star', verb: 'post', object: id, time: new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString() });
const none = async () => [];

const policies: Record<string, TimelinePolicy> = {
  ring: { model: 'ring', cap: 5, inactivityMs: 60_000 },
  'ring by relevance': { model: 'ring', cap: 5, inactivityMs: 60_000, relevancy: true },
  hybrid: { model: 'hybrid', cap: 5, inactivityMs: 60_000 },
};

/** A store at position 2 where every reader follows user:star, which had posted `old` before. */
async function followed(policy: TimelinePolicy): Promise<MemoryTimelineStore> {
  const store = new MemoryTimelineStore(() => policy, () => Date.UTC(2026, 0, 1));
  const follows: TimelineDelivery[] = readers.map((reader) => ({ kind: 'follow', reader, target: 'user:star', recent: [activity('old', 1)], exhausted: true }));
  expect(await deliverInOrder(store, chunkDeliveries(follows), 0, 2)).toEqual({ applied: true, position: 2 });
  // Every other reader reads often: a hybrid timeline pushes their edges and pulls the others'.
  if (policy.model === 'hybrid') for (const reader of readers.filter((_, i) => i % 2 === 0)) for (let read = 0; read < 5; read++) await store.readPage(reader, undefined, 10, none);
  return store;
}

/** Every reader's timeline, as items' ids. */
async function contents(store: MemoryTimelineStore): Promise<string[][]> {
  return Promise.all(readers.map(async (reader) => (await store.readPage(reader, undefined, 10, none)).items.map((item) => item.id)));
}

function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const copy = [...items];
  for (let i = copy.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy;
}

describe.each(Object.keys(policies))('chunk jobs on a memory timeline (%s)', (name) => {
  const policy = policies[name]!;

  it('applied in any order, some twice, end as the ordered delivery does; late ones are refused', async () => {
    const random = seededRandom(name.length);
    const posts: ReadersDelivery[] = [
      { kind: 'insert', readers, activity: activity('p3', 3) },
      { kind: 'remove', readers, id: 'old' },
      { kind: 'bump', readers, activity: { ...activity('p3', 3), bumpedAt: new Date(Date.UTC(2026, 0, 1, 0, 1)).toISOString() } },
      { kind: 'insert', readers, activity: activity('p6', 6) },
      { kind: 'update', readers, activity: { ...activity('p6', 6), object: 'p6 edited', updatedAt: new Date(Date.UTC(2026, 0, 1, 0, 2)).toISOString() } },
    ];

    const ordered = await followed(policy);
    const jobbed = await followed(policy);
    let position = 2;
    for (const delivery of posts) {
      const event = position + 1;
      expect(await deliverInOrder(ordered, chunkDeliveries([delivery]), position, event)).toEqual({ applied: true, position: event });

      const jobs = deliveryJobs(delivery, position);
      expect(jobs.length).toBeGreaterThan(1);
      // A worker that died after applying its job: the job is applied again by another.
      const applications: DeliverRequest[] = shuffled([...jobs, ...jobs.filter(() => random() < 0.5)], random);
      for (const job of applications) expect(await jobbed.deliver(job)).toEqual({ applied: true, position });
      // Done: the planner moves timeline past the event.
      expect(await jobbed.deliver({ after: position, position: event, deliveries: [] })).toEqual({ applied: true, position: event });
      // A job that comes late now changes nothing.
      expect(await jobbed.deliver(jobs[0]!)).toEqual({ applied: false, position: event });
      position = event;
    }

    expect(await contents(jobbed)).toEqual(await contents(ordered));
    expect(await jobbed.counters()).toEqual(await ordered.counters());
    // Both posts reached every reader, but a hybrid timeline's pulled half.
    expect((await jobbed.counters()).delivered).toBe(name === 'hybrid' ? READERS : 2 * READERS);
  });
});
