import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultFeedConfig, hiddenStream, subjects, type Activity, type FeedId, type HideRequest } from '@feedmill/contracts';
import { FeedGroups } from '@feedmill/config';
import { FileEventLog } from '@feedmill/event-log';
import { activityAt } from '@feedmill/feed-models/testing';
import { MemoryTimelineStore } from '@feedmill/stores';
import type { ServiceClient } from '@feedmill/transport';
import { HidingActivities } from './hidden-activities.js';

const groups = new FeedGroups(defaultFeedConfig);
const reader: FeedId = 'timeline:alice';
const publicPost = activityAt('pub', 'user:bob', 1);
const privatePost = activityAt('priv', 'user:dan', 2);
const ownPost = activityAt('own', 'user:alice', 3);
const time = '2026-01-01T00:00:00.000Z';

let dir: string;
let log: FileEventLog;
/** What content was asked to have applied before answering each `get`. */
let askedAtLeast: Array<number | undefined>;
/** Whether the reader's timeline applies what is appended within the wait. */
let applies: boolean;

/** Content knows the three posts; graph lets alice read every feed but dan's (private, not followed). */
const client = {
  async request(subject: string, payload: { ids?: string[]; atLeast?: number; feed?: FeedId }) {
    if (subject === subjects.content.get) {
      askedAtLeast.push(payload.atLeast);
      return [publicPost, privatePost, ownPost].filter((activity: Activity) => payload.ids!.includes(activity.id));
    }
    if (subject === subjects.graph.mayRead) return { allowed: payload.feed !== 'user:dan' };
    throw new Error(`unexpected ${subject}`);
  },
} as unknown as ServiceClient;

function hiding(): HidingActivities {
  const store = new MemoryTimelineStore(() => groups.timelinePolicyOf(reader));
  return new HidingActivities(groups, log, client, store, async () => ({ reached: applies }));
}

const request = (id: string, hidden: boolean): HideRequest => ({ feed: reader, id, hidden, time });
const loggedTypes = async () => (await log.readStream(hiddenStream(reader))).map((event) => `${event.type} ${(event.data as { id: string }).id}`);

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'feedmill-hiding-'));
  log = await FileEventLog.open({ dir });
  askedAtLeast = [];
  applies = true;
});

afterEach(async () => {
  await log.close();
  await rm(dir, { recursive: true, force: true });
});

describe('hiding an activity', () => {
  it('answers activity_not_found alike for an unknown id and for one in a feed the owner may not read, writing nothing', async () => {
    for (const id of ['no-such', privatePost.id]) {
      await expect(hiding().hide(request(id, true))).rejects.toMatchObject({ code: 'activity_not_found', field: 'activityId' });
    }
    expect(await loggedTypes()).toEqual([]);
    // The owner's own feed and a public one are readable.
    await hiding().hide(request(ownPost.id, true));
    await hiding().hide(request(publicPost.id, true));
    expect(await loggedTypes()).toEqual(['ActivityHidden own', 'ActivityHidden pub']);
  });

  it('asks content once it has applied the log as it stands, so that an activity just posted elsewhere counts', async () => {
    const { position: head } = await log.appendToStream('unrelated', [{ type: 'Other', data: {} }]);
    await hiding().hide(request(publicPost.id, true));
    expect(askedAtLeast).toEqual([head]);
  });

  it('answers unavailable when the timeline has not applied the hiding in time, and a showing right after still writes', async () => {
    applies = false;
    await expect(hiding().hide(request(publicPost.id, true))).rejects.toMatchObject({ code: 'unavailable' });
    // The store has applied nothing, but the log has the hiding: the showing must undo it.
    applies = true;
    const shown = await hiding().hide(request(publicPost.id, false));
    expect(shown.position).toBeGreaterThan(0);
    expect(await loggedTypes()).toEqual(['ActivityHidden pub', 'ActivityShown pub']);
  });

  it('writes nothing when the log already has the state asked for, and answers once the timeline has it', async () => {
    await hiding().hide(request(publicPost.id, true));
    expect(await hiding().hide(request(publicPost.id, true))).toEqual({ id: publicPost.id, hidden: true, position: 0 });
    applies = false;
    await expect(hiding().hide(request(publicPost.id, true))).rejects.toMatchObject({ code: 'unavailable' });
    expect(await hiding().hide(request('never-hidden', false))).toEqual({ id: 'never-hidden', hidden: false, position: 0 });
    expect(await loggedTypes()).toEqual(['ActivityHidden pub']);
  });
});
