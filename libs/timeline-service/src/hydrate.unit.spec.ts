import type { Activity, TimelineItem } from '@feedmill/contracts';
import { activityAt } from '@feedmill/feed-models/testing';
import { hydrate, HYDRATE_CHUNK } from './hydrate.js';

describe('hydrate', () => {
  it('asks for references in requests of at most a page, keeps the order, and leaves out what is gone', async () => {
    const activities = Array.from({ length: 2 * HYDRATE_CHUNK + 50 }, (_, i) => activityAt(`a${i}`, 'user:a', i));
    const gone = new Set(['a7', `a${HYDRATE_CHUNK + 3}`]);
    // Every third item embedded, the rest references.
    const items: TimelineItem[] = activities.map((a, i) => (i % 3 === 0 ? a : { id: a.id, feed: a.feed, time: a.time }));
    const asked: string[][] = [];
    const get = async (ids: string[]): Promise<Activity[]> => {
      asked.push(ids);
      return activities.filter((a) => ids.includes(a.id) && !gone.has(a.id));
    };
    const hydrated = await hydrate(items, get);
    expect(hydrated.map((a) => a.id)).toEqual(activities.filter((a, i) => i % 3 === 0 || !gone.has(a.id)).map((a) => a.id));
    expect(hydrated.every((a) => a.verb !== undefined)).toBe(true);
    expect(asked.every((ids) => ids.length <= HYDRATE_CHUNK)).toBe(true);
    expect(asked.flat().sort()).toEqual(items.filter((_, i) => i % 3 !== 0).map((item) => item.id).sort());
  });

  it('asks nothing when every item is embedded', async () => {
    const items = [activityAt('a', 'user:a', 1)];
    expect(await hydrate(items, () => Promise.reject(new Error('asked')))).toBe(items);
  });
});
