import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { timelineModels, type Activity, type TimelineModel } from '@feedmill/contracts';
import { seededRandom } from '@feedmill/feed-models/testing';
import { FeedClient, hs256Tokens, startStandalone, waitUntilSettled, type Deployment } from '@feedmill/harness';

const secret = 'access property secret of sixteen characters';
const users = ['u0', 'u1', 'u2', 'u3', 'u4'] as const;
type User = (typeof users)[number];
/** Operations per model: over every model, more than 10,000. */
const OPERATIONS = 1_750;
/** The sizes a read's pages take, at random: small ones find the edges, large ones keep long timelines quick to check. */
const PAGE_SIZES = [1, 2, 3, 7, 20, 50];

/** What each user reads: its timeline, which follows, and its notification feed, which only takes what is addressed to it. */
type Reader = `timeline:${User}` | `notification:${User}`;
const ownerOf = (feed: string) => feed.slice(feed.indexOf(':') + 1) as User;

/**
 * Who may see what, the plain way: each user's producer feed with its activities and its
 * privacy, each user's timeline with what it follows, and the requests waiting. A timeline
 * shows the activities of what it follows, and every feed the activities addressed to it
 * whose author its owner may read now; a producer feed is read by its owner, by anyone while
 * public, and by its approved followers' users while private.
 */
class Reference {
  readonly activities = new Map<User, Activity[]>(users.map((u) => [u, []]));
  readonly following = new Map<User, Set<User>>(users.map((u) => [u, new Set()]));
  readonly requests = new Map<User, Set<User>>(users.map((u) => [u, new Set()]));
  readonly privateFeeds = new Set<User>();

  timelineOf(reader: Reader): string[] {
    const owner = ownerOf(reader);
    const follows = reader.startsWith('timeline:') ? this.following.get(owner)! : new Set<User>();
    const addressed = (a: Activity) => (a.to?.includes(reader) ?? false) && this.mayRead(owner, ownerOf(a.feed));
    return users
      .flatMap((author) => this.activities.get(author)!.filter((a) => follows.has(author) || addressed(a)))
      .sort(newestFirst)
      .map(shown);
  }

  /** The targets an activity of `author` keeps: those whose owner may read its feed as it is posted. */
  keptTargets(author: User, to: readonly Reader[]): Reader[] {
    return to.filter((target) => this.mayRead(ownerOf(target), author));
  }

  mayRead(reader: User, owner: User): boolean {
    return reader === owner || !this.privateFeeds.has(owner) || this.following.get(reader)!.has(owner);
  }
}

const newestFirst = (a: Activity, b: Activity) => (`${a.time}|${a.id}` < `${b.time}|${b.id}` ? 1 : -1);
/** What a page shows of an activity: which one, and which version. */
const shown = (a: Activity) => `${a.id}:${a.object}`;

/**
 * Random users post (a third of the posts addressed with `to`, some to feeds they may not
 * address), update, remove, turn their feeds private and public, follow, unfollow, ask,
 * approve, reject and remove followers, and read their timelines and notification feeds,
 * through the HTTP API with their own tokens, on every timeline model; every page of every read is checked against the
 * reference: nothing shown that the reader may not see, nothing missing that it may.
 */
describe('who may see what, against a reference', () => {
  const tokenFor = hs256Tokens(secret);

  /** A standalone whose timeline groups use `model`, with tokens checked; stopped and removed after `play`. */
  async function withStandalone(model: TimelineModel, play: (api: FeedClient) => Promise<void>): Promise<void> {
    const dataDir = await mkdtemp(join(tmpdir(), 'feedmill-access-'));
    let deployment: Deployment | undefined;
    try {
      const config = join(dataDir, 'feeds.json');
      const timelines = { kind: 'timeline', model, cap: 4 };
      await writeFile(config, JSON.stringify({ groups: { user: { kind: 'producer' }, timeline: timelines, notification: { ...timelines, acceptsTargets: true } } }));
      deployment = await startStandalone({ dataDir, env: { FEEDMILL_JWT_SECRET: secret, FEED_CONFIG: config } });
      await play(new FeedClient(deployment.baseUrl, tokenFor));
    } finally {
      await deployment?.stop();
      await rm(dataDir, { recursive: true, force: true });
    }
  }

  it('keeps pages full and newer-than polls whole when a feed holds an entry its reader may no longer see', () =>
    withStandalone('ring', async (api) => {
      const at = (second: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString();
      const reader = 'notification:u0';
      const toReader = (object: string, second: number) => ({ actor: 'u1', verb: 'post', object, time: at(second), to: [reader] });
      await api.post('user:u1', toReader('p0', 0));
      await waitUntilSettled(api);
      const first = await api.page(reader, 2);
      expect(first.body.items.map((item) => item.object)).toEqual(['p0']);
      // u2's private feed, which u0 follows, addresses u0, then removes u0 from its followers:
      // the entry stays in the feed, and every read leaves it out.
      await api.call('PUT', '/v1/feeds/user/u2/settings', { private: true });
      expect((await api.follow('timeline:u0', 'user:u2')).status).toBe(202);
      expect((await api.call('POST', '/v1/feeds/user/u2/follow-requests/timeline/u0')).status).toBe(204);
      await waitUntilSettled(api);
      for (const [second, object] of [[1, 'n1'], [2, 'n2'], [3, 'n3']] as const) await api.post('user:u1', toReader(object, second));
      expect((await api.post('user:u2', { ...toReader('gone', 4), actor: 'u2' })).body.to).toEqual([reader]);
      expect((await api.call('DELETE', '/v1/feeds/user/u2/followers/timeline/u0')).status).toBe(204);
      await waitUntilSettled(api);

      // A page with more to come is full.
      const page = await api.page(reader, 1);
      expect([page.body.items.map((item) => item.object), page.body.next !== null]).toEqual([['n3'], true]);
      // A poll above p0 that does not hold every newer entry says so, and scrolling on finds the rest.
      const poll = await api.newer(reader, first.body.newest!, 2);
      expect(poll.body.items.map((item) => item.object)).toEqual(['n3', 'n2']);
      expect(poll.body.next).not.toBeNull();
      const rest = await api.page(reader, 2, poll.body.next!);
      expect(rest.body.items.map((item) => item.object)).toEqual(['n1', 'p0']);
    }), 60_000);

  // The models run side by side, each on its own standalone: a play waits on HTTP round trips
  // most of the time, so several together keep both cores busy.
  test.concurrent.each(timelineModels.map((model) => [model]))(`%s timelines: shows each reader exactly what it may see, over ${OPERATIONS} random operations`, (model: TimelineModel) =>
    withStandalone(model, async (api) => {
      const random = seededRandom(timelineModels.indexOf(model) + 101);
      const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
      const ref = new Reference();
      const as = async (user: User) => ({ authorization: `Bearer ${await tokenFor(user)}` });
      let reads = 0;
      let pagesChecked = 0;
      /** Posts that kept a target, and notification reads that showed something: the play addressed. */
      let addressedPosts = 0;
      let notificationsSeen = 0;
      for (let op = 0; op < OPERATIONS; op++) {
        const user = pick(users);
        const other = pick(users.filter((u) => u !== user));
        const roll = random();
        const step = `operation ${op} (${user}, ${other})`;
        if (roll < 0.22) {
          // A third of the posts are addressed: to notification feeds (anyone's) and the poster's own timeline.
          const to = random() < 0.35 ? [...new Set<Reader>([`notification:${other}`, pick<Reader>([`notification:${user}`, `timeline:${user}`, `notification:${pick(users)}`])])] : undefined;
          const posted = await api.post(`user:${user}`, { actor: user, verb: 'post', object: `o${op}`, ...(to && { to }) });
          expect([step, posted.status]).toEqual([step, 201]);
          const kept = to && ref.keptTargets(user, to);
          expect([step, posted.body.to]).toEqual([step, kept && kept.length > 0 ? kept : undefined]);
          if (kept && kept.length > 0) addressedPosts++;
          ref.activities.get(user)!.push(posted.body);
        } else if (roll < 0.23) {
          // Another user's timeline does not take activities addressed to it: refused, nothing recorded.
          const refused = await api.post(`user:${user}`, { actor: user, verb: 'post', object: `o${op}`, to: [`notification:${user}`, `timeline:${other}`] });
          expect([step, refused.status, (refused.body as unknown as { field: string }).field]).toEqual([step, 403, 'body.to[1]']);
        } else if (roll < 0.25) {
          // An update in place: readers see the new version where the old one was.
          const own = ref.activities.get(user)!;
          if (own.length === 0) continue;
          const index = Math.floor(random() * own.length);
          const updated = await api.call<Activity>('PATCH', `/v1/feeds/user/${user}/activities/${own[index]!.id}`, { object: `o${op}-updated` });
          expect([step, updated.status, updated.body.object]).toEqual([step, 200, `o${op}-updated`]);
          own[index] = updated.body;
        } else if (roll < 0.28) {
          const own = ref.activities.get(user)!;
          if (own.length === 0) continue;
          const [removed] = own.splice(Math.floor(random() * own.length), 1);
          expect([step, (await api.remove(`user:${user}`, removed!.id)).status]).toEqual([step, 204]);
        } else if (roll < 0.32) {
          const makePrivate = !ref.privateFeeds.has(user);
          expect([step, (await api.call('PUT', `/v1/feeds/user/${user}/settings`, { private: makePrivate })).status]).toEqual([step, 200]);
          if (makePrivate) ref.privateFeeds.add(user);
          else {
            // Turning public approves the follows waiting.
            ref.privateFeeds.delete(user);
            for (const asker of ref.requests.get(user)!) ref.following.get(asker)!.add(user);
            ref.requests.get(user)!.clear();
          }
        } else if (roll < 0.47) {
          const answer = await api.follow(`timeline:${user}`, `user:${other}`);
          const following = ref.following.get(user)!;
          const expected = following.has(other) || !ref.privateFeeds.has(other) ? 204 : 202;
          expect([step, answer.status]).toEqual([step, expected]);
          if (expected === 204) following.add(other);
          else ref.requests.get(other)!.add(user);
        } else if (roll < 0.53) {
          expect([step, (await api.unfollow(`timeline:${user}`, `user:${other}`)).status]).toEqual([step, 204]);
          ref.following.get(user)!.delete(other);
          ref.requests.get(other)!.delete(user);
        } else if (roll < 0.62) {
          // The owner answers a request, if one waits.
          const waiting = [...ref.requests.get(user)!];
          if (waiting.length === 0) continue;
          const asker = pick(waiting);
          const approve = random() < 0.6;
          expect([step, (await api.call(approve ? 'POST' : 'DELETE', `/v1/feeds/user/${user}/follow-requests/timeline/${asker}`)).status]).toEqual([step, 204]);
          ref.requests.get(user)!.delete(asker);
          if (approve) ref.following.get(asker)!.add(user);
        } else if (roll < 0.66) {
          expect([step, (await api.call('DELETE', `/v1/feeds/user/${user}/followers/timeline/${other}`)).status]).toEqual([step, 204]);
          ref.following.get(other)!.delete(user);
          ref.requests.get(user)!.delete(other);
        } else if (roll < 0.86) {
          // Reads see every command acknowledged before them once fan-out has applied it.
          await waitUntilSettled(api, 30_000, 2);
          const reader: Reader = random() < 0.7 ? `timeline:${user}` : `notification:${user}`;
          const seen: string[] = [];
          let cursor: string | undefined;
          for (;;) {
            // Each page its own size, so that cursors are checked across sizes and page edges fall everywhere.
            const size = pick(PAGE_SIZES);
            const page = await api.page(reader, size, cursor);
            expect([step, page.status]).toEqual([step, 200]);
            // A page with more after it is full, whatever the reader may no longer see (a page
            // reads past up to 16 timeline reads of left-out entries, far more than these hold).
            if (page.body.next !== null) expect([step, page.body.items.length]).toEqual([step, size]);
            seen.push(...page.body.items.map(shown));
            pagesChecked++;
            if (page.body.next === null) break;
            cursor = page.body.next;
          }
          expect({ step, model, reader, seen }).toEqual({ step, model, reader, seen: ref.timelineOf(reader) });
          if (reader.startsWith('notification:') && seen.length > 0) notificationsSeen++;
          reads++;
        } else {
          // Another user's producer feed, read directly.
          const page = await api.call<{ items: Activity[] }>('GET', `/v1/feeds/user/${other}?limit=100`, undefined, await as(user));
          if (!ref.mayRead(user, other)) expect([step, page.status]).toEqual([step, 403]);
          else expect({ step, status: page.status, ids: page.body.items.map(shown) }).toEqual({ step, status: 200, ids: [...ref.activities.get(other)!].sort(newestFirst).map(shown) });
        }
      }
      // Every reader at the end, and that the play did read.
      await waitUntilSettled(api);
      for (const reader of users.flatMap((u): Reader[] => [`timeline:${u}`, `notification:${u}`])) {
        expect({ reader, seen: (await api.readAll(reader, 2)).map(shown) }).toEqual({ reader, seen: ref.timelineOf(reader) });
      }
      expect(reads).toBeGreaterThan(OPERATIONS / 10);
      expect(addressedPosts).toBeGreaterThan(OPERATIONS / 30);
      expect(notificationsSeen).toBeGreaterThan(OPERATIONS / 50);
      expect(pagesChecked).toBeGreaterThan(reads);
    }),
    240_000,
  );
});

