import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decodeFeedEvents, feedEvents, type FeedId, type FeedLogEvent } from '@feedmill/contracts';
import { FileEventLog } from '@feedmill/event-log';
import { FollowerIndex } from '@feedmill/feed-models';
import { readAllEvents } from '@feedmill/harness';
import { advanceFromLog } from './follower-index-from-log.js';

const time = '2026-11-21T10:00:00.000Z';
const activity = (id: string, feed: string) => ({ id, feed: feed as FeedId, actor: 'a', verb: 'post', object: 'o', time });

describe('a follower index read from the log', () => {
  let dir: string;
  beforeEach(async () => (dir = await mkdtemp(join(tmpdir(), 'feedmill-follower-index-'))));
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('takes in imported follows and imported activities as the live fan-out does, up to the position asked', async () => {
    const log = await FileEventLog.open({ dir });
    const append = (stream: string, event: FeedLogEvent) => log.appendToStream(stream, [feedEvents.encode(event)]);
    await append('import-activities-1', { type: 'ActivitiesAdded', data: { id: '1', activities: [activity('a1', 'user:imported'), activity('a2', 'user:other')] } });
    await append('feed-user:single', { type: 'ActivityAdded', data: { activity: activity('a3', 'user:single') } });
    await append('import-follows-1', { type: 'FeedsFollowed', data: { id: '1', time, follows: [['timeline:r1' as FeedId, 'user:imported' as FeedId], ['timeline:r2' as FeedId, 'user:imported' as FeedId]] } });
    await append('follows-timeline:r3', { type: 'FeedFollowed', data: { follower: 'timeline:r3', target: 'user:imported', time } });
    await append('feed-user:late', { type: 'ActivityAdded', data: { activity: activity('a4', 'user:late') } });

    const index = new FollowerIndex();
    await advanceFromLog(log, index, 4, new AbortController().signal);
    await log.close();

    expect(index.position).toBe(4);
    expect(index.followersOf('user:imported' as FeedId)).toEqual(['timeline:r1', 'timeline:r2', 'timeline:r3']);
    const posted = ['user:imported', 'user:other', 'user:single', 'user:late', 'user:never'].map((feed) => index.hasHadActivities(feed as FeedId));
    expect(posted).toEqual([true, true, true, false, false]);
  });

  it('takes in erasures as the live fan-out does: an erased feed keeps no followers, and an erased reader follows nothing', async () => {
    const log = await FileEventLog.open({ dir });
    const append = (stream: string, event: FeedLogEvent) => log.appendToStream(stream, [feedEvents.encode(event)]);
    await append('follows-timeline:alice', { type: 'FeedFollowed', data: { follower: 'timeline:alice', target: 'user:bob', time } });
    await append('follows-timeline:carol', { type: 'FeedFollowed', data: { follower: 'timeline:carol', target: 'user:dave', time } });
    await append('follows-timeline:erin', { type: 'FeedFollowed', data: { follower: 'timeline:erin', target: 'user:dave', time } });
    await append('feed-user:bob', { type: 'FeedErased', data: { feed: 'user:bob', time } });
    await append('feed-timeline:carol', { type: 'FeedErased', data: { feed: 'timeline:carol', time } });
    const head = await log.headPosition();

    const fromLog = new FollowerIndex();
    await advanceFromLog(log, fromLog, head, new AbortController().signal);
    const live = new FollowerIndex();
    live.advance(decodeFeedEvents(await readAllEvents(log)), head);
    await log.close();

    for (const index of [fromLog, live]) {
      expect(index.followersOf('user:bob' as FeedId)).toEqual([]);
      expect(index.followersOf('user:dave' as FeedId)).toEqual(['timeline:erin']);
    }
  });
});
