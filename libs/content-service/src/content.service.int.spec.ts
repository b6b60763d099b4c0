import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Activity, RecentActivitiesRequest } from '@feedmill/contracts';
import { FileEventLog } from '@feedmill/event-log';
import { MemoryContentStore } from '@feedmill/stores';
import { ContentService } from './content.service.js';

let dir: string;
let log: FileEventLog;
let content: ContentService;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'feedmill-content-'));
  log = await FileEventLog.open({ dir });
  content = new ContentService(log, new MemoryContentStore());
  await content.onApplicationBootstrap();
});
afterEach(async () => {
  await content.onModuleDestroy();
  await log.close();
  await rm(dir, { recursive: true, force: true });
});

const at = (second: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString();

async function post(count: number, extra?: { text: string }): Promise<Activity[]> {
  const posted: Activity[] = [];
  for (let i = 0; i < count; i++) {
    const activity = { actor: 'a', verb: 'post', object: `o${i}`, time: at(i), ...(extra ? { extra } : {}) };
    posted.push(await content.add({ feed: 'user:a', activity, id: `a${i}`, receivedAt: at(100) }));
  }
  return posted;
}

/** Every page of `recent`, following its cursor. */
async function pageThrough(request: Omit<RecentActivitiesRequest, 'feeds'>): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let before = request.before;
  for (let pages = 1; pages < 100; pages++) {
    const page = await content.recent({ ...request, feeds: ['user:a'], before });
    ids.push(...page.items.map((a) => a.id));
    if (page.next === null) return { ids, pages };
    before = page.next;
  }
  throw new Error('more than 100 pages');
}

describe('ContentService.recent', () => {
  it('pages by relevance with relevance cursors: every activity once, bumped ones where their bump puts them', async () => {
    await post(6);
    await content.bump({ feed: 'user:a', id: 'a1', time: at(50) });
    await content.bump({ feed: 'user:a', id: 'a3', time: at(40) });
    expect(await pageThrough({ limit: 2, order: 'relevance' })).toEqual({ ids: ['a1', 'a3', 'a5', 'a4', 'a2', 'a0'], pages: 3 });
    expect(await pageThrough({ limit: 2, order: 'time' })).toEqual({ ids: ['a5', 'a4', 'a3', 'a2', 'a1', 'a0'], pages: 3 });
  });

  it('cuts a page short past maxBytes, never to nothing, and its cursor goes on from there', async () => {
    await post(5, { text: 'x'.repeat(3_000) });
    const { ids, pages } = await pageThrough({ limit: 5, maxBytes: 7_000 });
    expect({ ids, pages }).toEqual({ ids: ['a4', 'a3', 'a2', 'a1', 'a0'], pages: 3 });
    const tiny = await content.recent({ feeds: ['user:a'], limit: 5, maxBytes: 10 });
    expect(tiny.items.map((a) => a.id)).toEqual(['a4']);
  });
});

describe('ContentService.recentEach', () => {
  it('answers a page per feed as recent answers each alone, and null for feeds past the byte budget, never the first', async () => {
    await post(3);
    await content.add({ feed: 'user:b', activity: { actor: 'b', verb: 'post', object: 'o', time: at(9) }, id: 'b0', receivedAt: at(100) });
    const each = await content.recentEach({ feeds: ['user:a', 'user:none', 'user:b'], limit: 2 });
    const alone = await Promise.all(['user:a', 'user:none', 'user:b'].map((feed) => content.recent({ feeds: [feed as 'user:a'], limit: 2 })));
    // A feed read's page also says its newest key (for newer-than polls); a backfill's need not.
    expect(each.pages).toEqual(alone.map(({ newest: _newest, ...page }) => page));
    expect(alone.map((page) => page.newest)).toEqual(['2026-01-01T00:00:02.000Z|a2', null, '2026-01-01T00:00:09.000Z|b0']);
    expect(each.pages.map((page) => page?.items.map((a) => a.id))).toEqual([['a2', 'a1'], [], ['b0']]);

    const tight = await content.recentEach({ feeds: ['user:b', 'user:a'], limit: 3, maxBytes: 10 });
    expect(tight.pages.map((page) => page?.items.map((a) => a.id) ?? null)).toEqual([['b0'], null]);
  });
});

describe('ContentService.addMany', () => {
  it('adds a batch as one event in a stream of its own, the first activity named for a repeated foreignId, and nothing for a batch of repeats', async () => {
    const [first] = await post(1, undefined);
    const foreign = await content.add({ feed: 'user:a', activity: { actor: 'a', verb: 'post', object: 'f', foreignId: 'f1' }, id: 'f1-first', receivedAt: at(1) });
    const head = await log.headPosition();
    const items = [
      { feed: 'user:a' as const, id: 'n1', activity: { actor: 'a', verb: 'post', object: 'x', foreignId: 'f1' } },
      { feed: 'user:b' as const, id: 'n2', activity: { actor: 'b', verb: 'post', object: 'y', foreignId: 'g' } },
      { feed: 'user:b' as const, id: 'n3', activity: { actor: 'b', verb: 'post', object: 'z', foreignId: 'g' } },
    ];
    const added = await content.addMany({ id: 'batch-1', receivedAt: at(50), activities: items });
    expect(added.map((a) => a.id)).toEqual(['f1-first', 'n2', 'n2']);
    expect(await log.headPosition()).toBe(head + 1);
    const [event] = await log.readStream('import-activities-batch-1');
    expect(event).toMatchObject({ type: 'ActivitiesAdded', revision: 0, data: { id: 'batch-1', activities: [expect.objectContaining({ id: 'n2' })] } });
    expect((await content.get({ ids: ['n2', 'n3', first!.id, foreign.id] })).map((a) => a.id).sort()).toEqual([first!.id, foreign.id, 'n2'].sort());

    expect(await content.addMany({ id: 'batch-2', receivedAt: at(51), activities: items.slice(0, 2) })).toEqual([foreign, added[1]]);
    expect(await log.headPosition()).toBe(head + 1);
  });

  it('waits for an add of the same foreignId still on its way to disk, and names it', async () => {
    const single = content.add({ feed: 'user:a', activity: { actor: 'a', verb: 'post', object: 'f', foreignId: 'race' }, id: 'single', receivedAt: at(1) });
    const batch = content.addMany({ id: 'batch-3', receivedAt: at(2), activities: [{ feed: 'user:a', id: 'bulk', activity: { actor: 'a', verb: 'post', object: 'g', foreignId: 'race' } }] });
    const [one, many] = await Promise.all([single, batch]);
    expect(many.map((a) => a.id)).toEqual([one.id]);
    expect(await log.readStream('import-activities-batch-3')).toEqual([]);
  });
});

describe('ContentService.update', () => {
  it('appends what changes, answers the activity as it now is, and keeps its place in both orders', async () => {
    await post(3, { text: 'before' });
    await content.bump({ feed: 'user:a', id: 'a0', time: at(50) });
    const head = await log.headPosition();
    const updated = await content.update({ feed: 'user:a', id: 'a1', time: at(60), object: 'edited', extra: { text: 'before' } });
    expect(updated).toMatchObject({ id: 'a1', object: 'edited', extra: { text: 'before' }, time: at(1), updatedAt: at(60) });
    expect(await log.headPosition()).toBe(head + 1);
    const [, , , , event] = await log.readStream('feed-user:a');
    expect(event).toMatchObject({ type: 'ActivityUpdated', revision: 4, data: { id: 'a1', feed: 'user:a', time: at(60), object: 'edited' } });
    expect((event!.data as Record<string, unknown>)['extra']).toBeUndefined();
    expect(await content.get({ ids: ['a1'] })).toEqual([updated]);
    expect(await pageThrough({ limit: 2, order: 'time' })).toEqual({ ids: ['a2', 'a1', 'a0'], pages: 2 });
    expect(await pageThrough({ limit: 2, order: 'relevance' })).toEqual({ ids: ['a0', 'a2', 'a1'], pages: 2 });

    // Sending what it already holds records nothing and answers the activity as it is.
    expect(await content.update({ feed: 'user:a', id: 'a1', time: at(70), object: 'edited' })).toEqual(updated);
    expect(await log.headPosition()).toBe(head + 1);
  });

  it('refuses an activity that is not in the feed, and appends nothing', async () => {
    await post(1);
    const head = await log.headPosition();
    await expect(content.update({ feed: 'user:b', id: 'a0', time: at(60), object: 'x' })).rejects.toMatchObject({ code: 'activity_not_found', field: 'activityId' });
    await expect(content.update({ feed: 'user:a', id: 'nope', time: at(60), object: 'x' })).rejects.toMatchObject({ code: 'activity_not_found' });
    expect(await log.headPosition()).toBe(head);
  });
});
