import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ContentService } from '@feedmill/content-service';
import { defaultFeedConfig, feedEvents, subjects, type FeedId } from '@feedmill/contracts';
import { FileEventLog } from '@feedmill/event-log';
import { GraphService } from '@feedmill/graph-service';
import { FeedGroups } from '@feedmill/config';
import { memoryStores } from '@feedmill/runtime';
import { MemoryContentStore, MemoryGraphStore, MemoryTimelineStore } from '@feedmill/stores';
import { stubServiceClient } from '@feedmill/harness';
import { TimelineService } from '@feedmill/timeline-service';

/**
 * With several graph or content replicas, the one that answers may lag behind the log. A
 * replica answers as of at least the `atLeast` it is given (it waits until it has applied
 * that much), and as it stands otherwise. Here the lagging replicas are real services whose
 * stores catch up with the log only when a request asks them to.
 */
let dir: string;
let log: FileEventLog;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'feedmill-lag-'));
  log = await FileEventLog.open({ dir });
});
afterEach(async () => {
  await log.close();
  await rm(dir, { recursive: true, force: true });
});

const reader = 'timeline:r' as FeedId;
const author = 'user:a' as FeedId;

it('builds a cache from follows and posts at least as new as what the timeline holds, whichever replica answers', async () => {
  const groups = new FeedGroups(defaultFeedConfig);
  await log.appendToStream(`follows-${reader}`, [feedEvents.encode({ type: 'FeedFollowed', data: { follower: reader, target: author, time: '2026-01-01T00:00:00.000Z' } })]);
  const activity = { id: 'a1', feed: author, actor: 'a', verb: 'post', object: 'o', time: '2026-01-01T00:00:01.000Z' };
  await log.appendToStream(`feed-${author}`, [feedEvents.encode({ type: 'ActivityAdded', data: { activity } })]);

  const graphStore = new MemoryGraphStore();
  const contentStore = new MemoryContentStore();
  const graph = new GraphService(log, graphStore, groups);
  const content = new ContentService(log, contentStore);
  const catchUp = async (store: MemoryGraphStore | MemoryContentStore, atLeast: number | undefined) => {
    const applied = await store.position();
    if (atLeast !== undefined && atLeast > applied) await store.apply((await readAll()).filter((e) => e.position > applied && e.position <= atLeast));
  };
  const readAll = async () => [...(await log.readStream(`follows-${reader}`)), ...(await log.readStream(`feed-${author}`))].sort((a, b) => a.position - b.position);
  const asked: string[] = [];
  const client = stubServiceClient({
    [subjects.graph.following]: async (request) => {
      asked.push(`${subjects.graph.following} atLeast=${request.atLeast}`);
      await catchUp(graphStore, request.atLeast);
      return graph.following(request);
    },
    [subjects.graph.edgeBounds]: async (request) => {
      asked.push(`${subjects.graph.edgeBounds} atLeast=${request.atLeast}`);
      await catchUp(graphStore, request.atLeast);
      return graph.edgeBounds(request);
    },
    [subjects.content.recent]: async (request) => {
      asked.push(`${subjects.content.recent} atLeast=${request.atLeast}`);
      await catchUp(contentStore, request.atLeast);
      return content.recent(request);
    },
  });

  // The timeline has applied the follow and the post (position 2); the replicas nothing yet.
  const store = new MemoryTimelineStore((feed) => groups.timelinePolicyOf(feed));
  await store.deliver({ after: 0, position: 2, deliveries: [{ kind: 'follow', reader, target: author, recent: [], exhausted: true }, { kind: 'insert', readers: [reader], activity }] });
  const timeline = new TimelineService(client, groups, log, { ...memoryStores, timeline: async () => store }, () => defaultFeedConfig);
  await timeline.onModuleInit();
  const page = await timeline.read({ feed: reader, limit: 10 });
  expect(page.items.map((a) => a.id)).toEqual(['a1']);
  expect(asked).toEqual([`${subjects.graph.edgeBounds} atLeast=2`, `${subjects.graph.following} atLeast=2`, `${subjects.content.recent} atLeast=2`]);
});
