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
