import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { MAX_CAP, MAX_SINGLE_DOCUMENT_CAP, sortKeyOf, type Activity, type FeedId, type TimelineModel } from '@feedmill/contracts';
import { FeedmillClient, type FeedmillApiError } from '@feedmill/client';
import { FeedClient, nextStreamEvent, waitFor, type Deployment, type TokenFor } from '@feedmill/harness';
import { mongoTimelineModels } from '@feedmill/stores';

/** The cap the scenarios run with: small, so that scrolling past it takes a few posts. */
export const SCENARIO_CAP = 5;

const ids = (items: Activity[]) => items.map((a) => a.id);


/**
 * What a user of the HTTP API sees, whatever the deployment. `start` gets extra
 * environment (a feed config with a small cap) and returns a running deployment.
 */
export function describeFeedScenarios(
  name: string,
  start: (env: Record<string, string>) => Promise<Deployment>,
  model: TimelineModel = 'cache',
  embed = true,
  /** When the deployment checks tokens: each request carries its acting user's. */
  tokenFor?: TokenFor,
): void {
  const title = `feed scenarios: ${name}, ${model} timelines${embed ? '' : ', linked'}${tokenFor ? ', with tokens' : ''}`;
  // CI runs the scenarios with STORE=mongodb too; MongoDB timelines keep fewer models and no notification marks.
  const onMongo = process.env['STORE'] === 'mongodb';
  if (onMongo && !(mongoTimelineModels as readonly string[]).includes(model)) {
    console.log(`SKIPPED: ${title}: STORE=mongodb keeps the models ${mongoTimelineModels.join(', ')}`);
    it.todo(`${title} (not on MongoDB timelines)`);
    return;
  }
  if (onMongo) console.log(`SKIPPED: ${title}: the notification feed scenario, since STORE=mongodb keeps no seen and read marks`);
  const notificationsIt = onMongo ? it.skip : it;
  describe(title, () => {
    let deployment: Deployment;
    let api: FeedClient;
    let configDir: string;
    let run = 0;
    /** Fresh feed names per test, so tests share one deployment without sharing feeds. */
    const feed = (group: 'user' | 'timeline' | 'hot' | 'deep' | 'notify' | 'digest' | 'alerts', id: string): FeedId => `${group}:t${run}-${id}`;
    /** The largest cap the model allows: past what one request to content may ask for. */
    const deepCap = model === 'cache' || model === 'time-buckets' ? MAX_SINGLE_DOCUMENT_CAP : MAX_CAP;

    beforeAll(async () => {
      configDir = await mkdtemp(join(tmpdir(), 'feedmill-config-'));
      const configPath = join(configDir, 'feeds.json');
      await writeFile(configPath, JSON.stringify({ groups: { user: { kind: 'producer' }, timeline: { kind: 'timeline', model, cap: SCENARIO_CAP, embed }, hot: { kind: 'timeline', model, cap: SCENARIO_CAP, embed, relevancy: true }, deep: { kind: 'timeline', model, cap: deepCap, embed }, notify: { kind: 'timeline', model, cap: SCENARIO_CAP, embed, acceptsTargets: true }, digest: { kind: 'timeline', model, cap: 20, embed, aggregate: { by: ['verb', 'object'], windowMinutes: 60 } }, ...(!onMongo && { alerts: { kind: 'timeline', model, cap: 20, embed, notifications: true } }) } }));
      deployment = await start({ FEED_CONFIG: configPath });
      api = new FeedClient(deployment.baseUrl, tokenFor);
    });
    afterAll(async () => {
      await deployment?.stop();
      await rm(configDir, { recursive: true, force: true });
    });
    beforeEach(() => {
      run++;
    });

    const timelineEquals = (reader: string, expected: () => Activity[]) =>
      waitFor(
        async () => {
          const items = await api.readAll(reader, 4);
          return JSON.stringify(ids(items)) === JSON.stringify(ids(expected())) ? items : undefined;
        },
        { what: `${reader} to show ${ids(expected()).length} activities` },
      );

    it('delivers a post to every follower', async () => {
      const [bob, alice, carol] = [feed('user', 'bob'), feed('timeline', 'alice'), feed('timeline', 'carol')];
      expect((await api.follow(alice, bob)).status).toBe(204);
      expect((await api.follow(carol, bob)).status).toBe(204);
      const posted = await api.post(bob, { actor: 'bob', verb: 'post', object: 'photo:1' });
      expect(posted.status).toBe(201);
      expect(posted.body).toMatchObject({ feed: bob, actor: 'bob', verb: 'post', object: 'photo:1' });
      await timelineEquals(alice, () => [posted.body]);
      await timelineEquals(carol, () => [posted.body]);
      // The whole activity, whether the group embeds it or links to it.
      expect((await api.page(alice)).body.items).toEqual([posted.body]);
      expect((await api.page(bob)).body.items).toEqual([posted.body]);
    });

    it('stops delivering after an unfollow', async () => {
      const [bob, alice, carol] = [feed('user', 'bob'), feed('timeline', 'alice'), feed('timeline', 'carol')];
      await api.follow(alice, bob);
      await api.follow(carol, bob);
      const first = (await api.post(bob, { actor: 'bob', verb: 'post', object: 'one' })).body;
      await timelineEquals(alice, () => [first]);
      expect((await api.unfollow(alice, bob)).status).toBe(204);
      expect((await api.unfollow(alice, bob)).status).toBe(204);
      const second = (await api.post(bob, { actor: 'bob', verb: 'post', object: 'two' })).body;
      // carol still follows: once the second post reached her, alice's timeline is settled.
      await timelineEquals(carol, () => [second, first]);
      expect(ids(await api.readAll(alice))).not.toContain(second.id);
    });

    it('keeps what a feed delivered past an unfollow that asks to, and drops it at a plain unfollow after', async () => {
      const [bob, alice] = [feed('user', 'bob'), feed('timeline', 'alice')];
      expect((await api.follow(alice, bob)).status).toBe(204);
      const first = (await api.post(bob, { actor: 'bob', verb: 'post', object: 'kept' })).body;
      await timelineEquals(alice, () => [first]);
      await api.api.unfollow(alice, bob, { keepHistory: true });
      expect(ids(await api.readAll(alice))).toEqual([first.id]);
      // A plain unfollow answers once the timeline shows nothing of the feed.
      expect((await api.unfollow(alice, bob)).status).toBe(204);
      expect(ids(await api.readAll(alice))).toEqual([]);
    });

    it('brings back the whole history, what was posted while unfollowed included, at a follow after an unfollow that kept it', async () => {
      const [bob, alice] = [feed('user', 'bob'), feed('timeline', 'alice')];
      expect((await api.follow(alice, bob)).status).toBe(204);
      const first = (await api.post(bob, { actor: 'bob', verb: 'post', object: 'first' })).body;
      // Reads, so that a hybrid edge is pushed.
      await timelineEquals(alice, () => [first]);
      await timelineEquals(alice, () => [first]);
      await api.api.unfollow(alice, bob, { keepHistory: true });
      const during = (await api.post(bob, { actor: 'bob', verb: 'post', object: 'during' })).body;
      expect((await api.follow(alice, bob)).status).toBe(204);
      const again = (await api.post(bob, { actor: 'bob', verb: 'post', object: 'again' })).body;
      await timelineEquals(alice, () => [again, during, first]);
    });

    it('delivers an addressed activity to its targets whoever follows whom, keeps it past an unfollow, and removes it with the activity', async () => {
      const [bob, alice, carol] = [feed('user', 'bob'), feed('timeline', 'alice'), feed('notify', 'carol')];
      expect((await api.follow(alice, bob)).status).toBe(204);
      const mention = await api.post(bob, { actor: 'bob', verb: 'mention', object: 'note:1', to: [carol, feed('timeline', 'bob')] });
      expect(mention.status).toBe(201);
      expect(mention.body.to).toEqual([carol, feed('timeline', 'bob')]);
      const plain = (await api.post(bob, { actor: 'bob', verb: 'post', object: 'note:2' })).body;
      await timelineEquals(carol, () => [mention.body]);
      await timelineEquals(alice, () => [plain, mention.body]);
      await timelineEquals(feed('timeline', 'bob'), () => [mention.body]);
      expect((await api.page(carol)).body.items).toEqual([mention.body]);
      // A target that follows the feed holds the activity once, and keeps it when it unfollows.
      expect((await api.follow(carol, bob)).status).toBe(204);
      await timelineEquals(carol, () => [plain, mention.body]);
      expect((await api.unfollow(carol, bob)).status).toBe(204);
      await timelineEquals(carol, () => [mention.body]);
      expect((await api.remove(bob, mention.body.id)).status).toBe(204);
      await timelineEquals(carol, () => []);
      await timelineEquals(alice, () => [plain]);
    });

    it('removes a deleted activity from the feed and from every timeline', async () => {
      const [bob, alice, carol] = [feed('user', 'bob'), feed('timeline', 'alice'), feed('timeline', 'carol')];
      await api.follow(alice, bob);
      await api.follow(carol, bob);
      const keep = (await api.post(bob, { actor: 'bob', verb: 'post', object: 'keep' })).body;
      const drop = (await api.post(bob, { actor: 'bob', verb: 'post', object: 'drop' })).body;
      await timelineEquals(alice, () => [drop, keep]);
      expect((await api.remove(bob, drop.id)).status).toBe(204);
      expect((await api.remove(bob, drop.id)).status).toBe(404);
      await timelineEquals(alice, () => [keep]);
      await timelineEquals(carol, () => [keep]);
      expect(ids(await api.readAll(bob))).toEqual([keep.id]);
    });

    it('lets a reader scroll past the cap and see every activity once, in order', async () => {
      const [bob, dan, alice] = [feed('user', 'bob'), feed('user', 'dan'), feed('timeline', 'alice')];
      await api.follow(alice, bob);
      await api.follow(alice, dan);
      const posted: Activity[] = [];
      for (let i = 0; i < 4 * SCENARIO_CAP; i++) {
        // Explicit times, some out of order, so that late arrivals land below the cap.
        const time = new Date(Date.UTC(2026, 0, 1, 0, 0, (i * 7) % 23, i)).toISOString();
        const author = i % 3 === 0 ? dan : bob;
        posted.push((await api.post(author, { actor: author, verb: 'post', object: `n${i}`, time })).body);
      }
      const expected = [...posted].sort((a, b) => (a.time === b.time ? (a.id < b.id ? 1 : -1) : a.time < b.time ? 1 : -1));
      const seen = await timelineEquals(alice, () => expected);
      expect(new Set(ids(seen)).size).toBe(posted.length);
    });

    it('answers newer-than polls (`after`): the newest entries above the cursor, and says when more arrived than a page holds', async () => {
      const [bob, dan, alice] = [feed('user', 'bob'), feed('user', 'dan'), feed('timeline', 'alice')];
      await api.follow(alice, bob);
      await api.follow(alice, dan);
      const post = async (author: string, n: number) => (await api.post(author, { actor: author, verb: 'post', object: `n${n}` })).body;
      const first = [await post(bob, 0), await post(dan, 1)];
      await timelineEquals(alice, () => [...first].reverse());
      for (const reader of [alice, bob]) {
        const top = (await api.page(reader, 10)).body;
        expect(top.newest).not.toBeNull();
        // Nothing new yet: an empty page, nothing below it, and no newer cursor to move to.
        expect((await api.newer(reader, top.newest!)).body).toEqual({ items: [], next: null, newest: null });
      }
      const polledFrom = (await api.page(alice, 10)).body.newest!;
      const producerFrom = (await api.page(bob, 10)).body.newest!;
      const second = [await post(bob, 2), await post(dan, 3), await post(bob, 4)];
      await timelineEquals(alice, () => [...second].reverse().concat([...first].reverse()));
      const fresh = (await api.newer(alice, polledFrom)).body;
      expect(ids(fresh.items)).toEqual(ids([...second].reverse()));
      expect(fresh.next).toBeNull();
      expect((await api.newer(alice, fresh.newest!)).body.items).toEqual([]);
      // A producer feed polls its own activities the same way.
      expect(ids((await api.newer(bob, producerFrom)).body.items)).toEqual([second[2]!.id, second[0]!.id]);
      // More arrived than one page holds (past the cap, too): the newest ones, and a cursor to read on down to the rest.
      const third: Activity[] = [];
      for (let i = 0; i < SCENARIO_CAP + 2; i++) third.push(await post(i % 2 ? dan : bob, 10 + i));
      const all = [...third].reverse().concat([...second].reverse(), [...first].reverse());
      await timelineEquals(alice, () => all);
      const overflow = (await api.newer(alice, fresh.newest!, 3)).body;
      expect(ids(overflow.items)).toEqual(ids(all.slice(0, 3)));
      expect(overflow.next).not.toBeNull();
      const below = (await api.page(alice, 25, overflow.next!)).body;
      expect(ids(below.items.slice(0, third.length - 3))).toEqual(ids(all.slice(3, third.length)));
      const exact = (await api.newer(alice, fresh.newest!, third.length)).body;
      expect(ids(exact.items)).toEqual(ids(all.slice(0, third.length)));
      expect(exact.next).toBeNull();
      // `after` with `cursor` (sent as written: the typed client never sends both), or one this API did not issue: a 400 naming `after`.
      expect(await api.call('GET', `/v1/feeds/${alice.replace(':', '/')}?after=${polledFrom}&cursor=${polledFrom}`)).toEqual({ status: 400, body: expect.objectContaining({ code: 'invalid_request', field: 'query.after' }) });
      await expect(api.api.readNewer(alice, 'bm90LWEtY3Vyc29y')).rejects.toMatchObject({ status: 400, code: 'invalid_cursor', field: 'query.after' });
    });

    it('streams the changes to a first page (added, updated, removed), resumes after Last-Event-ID, and resets from an id it does not keep', async () => {
      const [bob, dan, alice] = [feed('user', 'bob'), feed('user', 'dan'), feed('timeline', 'alice')];
      await api.follow(alice, bob);
      await api.follow(alice, dan);
      const before = (await api.post(bob, { actor: bob, verb: 'post', object: 'before' })).body;
      await timelineEquals(alice, () => [before]);
      const stream = api.api.stream(alice, { reconnect: false });
      const producer = api.api.stream(bob, { reconnect: false });
      try {
        expect(await nextStreamEvent(stream)).toMatchObject({ type: 'reset', data: { items: [before] } });
        expect(await nextStreamEvent(producer)).toMatchObject({ type: 'reset', data: { items: [before] } });
        // A post of each followed feed, pushed or pulled alike.
        for (const author of [dan, bob]) {
          const posted = (await api.post(author, { actor: author, verb: 'post', object: `live by ${author}` })).body;
          expect(await nextStreamEvent(stream)).toMatchObject({ type: 'added', data: { activity: posted, cursor: expect.any(String) } });
          if (author === bob) expect(await nextStreamEvent(producer)).toMatchObject({ type: 'added', data: { activity: posted } });
        }
        const changed = await api.api.updateActivity(bob, before.id, { object: 'edited' });
        expect(await nextStreamEvent(stream)).toMatchObject({ type: 'updated', data: { activity: { id: before.id, object: 'edited', updatedAt: changed.updatedAt } } });
        expect((await api.remove(bob, before.id)).status).toBe(204);
        expect(await nextStreamEvent(stream)).toEqual({ id: expect.any(String), type: 'removed', data: { id: before.id } });
      } finally {
        stream.close();
        producer.close();
      }
      // Missed while away: sent on resume, and nothing before it again.
      const missed = (await api.post(dan, { actor: dan, verb: 'post', object: 'missed' })).body;
      const resumed = api.api.stream(alice, { reconnect: false, lastEventId: stream.lastEventId });
      try {
        expect(await nextStreamEvent(resumed)).toMatchObject({ type: 'added', data: { activity: missed } });
      } finally {
        resumed.close();
      }
      const stranger = api.api.stream(alice, { reconnect: false, lastEventId: 'not-an-id-of-this-feed-7' });
      try {
        const reset = await nextStreamEvent(stranger);
        expect(reset.type).toBe('reset');
        expect(reset.type === 'reset' && 'items' in reset.data && ids(reset.data.items)).toEqual(ids((await api.page(alice, 25)).body.items));
      } finally {
        stranger.close();
      }
      // Another user's timeline is not streamed to this one; an unknown group is a 404 (the stream route's first answer, as sent).
      if (tokenFor) {
        const other = await api.call('GET', `/v1/feeds/${alice.replace(':', '/')}/stream`, undefined, { authorization: `Bearer ${await tokenFor('mallory')}` });
        expect(other).toEqual({ status: 403, body: expect.objectContaining({ code: 'forbidden' }) });
      }
      expect(await api.call('GET', '/v1/feeds/shop/1/stream')).toEqual({ status: 404, body: expect.objectContaining({ code: 'unknown_group', field: 'group' }) });
    });

    it('shows a newly followed feed’s history, and keeps cursors stable while new posts arrive', async () => {
      const [bob, alice] = [feed('user', 'bob'), feed('timeline', 'alice')];
      const older: Activity[] = [];
      for (let i = 0; i < 3 * SCENARIO_CAP; i++) older.unshift((await api.post(bob, { actor: 'bob', verb: 'post', object: `o${i}` })).body);
      // Feeds order by time, then id: two posts answered within one millisecond share a time.
      older.sort((a, b) => (sortKeyOf(a) < sortKeyOf(b) ? 1 : -1));
      await api.follow(alice, bob);
      await timelineEquals(alice, () => older);
      const first = await api.page(alice, 4);
      await api.post(bob, { actor: 'bob', verb: 'post', object: 'new' });
      const rest: Activity[] = [];
      let cursor = first.body.next;
      while (cursor) {
        const page = await api.page(alice, 4, cursor);
        rest.push(...page.body.items);
        cursor = page.body.next;
      }
      expect(ids([...first.body.items, ...rest])).toEqual(ids(older));
    });

    it('keeps no history of a private feed: not at an unfollow, not once the feed turns private, not after its owner removes the reader', async () => {
      const [bob, alice, carol] = [feed('user', 'bob'), feed('timeline', 'alice'), feed('timeline', 'carol')];
      const unfollowKeeping = (reader: FeedId) => api.api.unfollow(reader, bob, { keepHistory: true });
      const setPrivate = async (value: boolean) => expect(await api.api.putSettings(bob, { private: value })).toEqual({ private: value });
      await api.follow(alice, bob);
      await api.follow(carol, bob);
      const post = (await api.post(bob, { actor: 'bob', verb: 'post', object: 'kept for now' })).body;
      await timelineEquals(alice, () => [post]);
      await timelineEquals(carol, () => [post]);
      // Kept while the feed is public; its turning private ends the kept history.
      await unfollowKeeping(alice);
      expect(ids(await api.readAll(alice))).toEqual([post.id]);
      await setPrivate(true);
      await timelineEquals(alice, () => []);
      // An approved follower of the private feed unfollows keeping its history: nothing is kept.
      await unfollowKeeping(carol);
      expect(ids(await api.readAll(carol))).toEqual([]);
      // Public again, a kept history ends when the owner removes the reader.
      await setPrivate(false);
      await api.follow(carol, bob);
      await timelineEquals(carol, () => [post]);
      await unfollowKeeping(carol);
      expect(ids(await api.readAll(carol))).toEqual([post.id]);
      await api.api.removeFollower(bob, carol);
      expect(ids(await api.readAll(carol))).toEqual([]);
    });

    it('follows with a copy limit and unfollows keeping the history: every model shows the same, scrolled, after a removal and after a rebuild', async () => {
      const [bob, dan, alice, carol] = [feed('user', 'bob'), feed('user', 'dan'), feed('timeline', 'alice'), feed('timeline', 'carol')];
      const newestFirst = (items: Activity[]) => [...items].sort((a, b) => (a.time === b.time ? (a.id < b.id ? 1 : -1) : a.time < b.time ? 1 : -1));
      const older: Activity[] = [];
      for (let i = 0; i < 5; i++) older.unshift((await api.post(bob, { actor: 'bob', verb: 'post', object: `o${i}` })).body);
      // dan's whole history passes the cap, so that alice's pages cross the stored floor.
      await api.follow(alice, dan);
      const dans: Activity[] = [];
      for (let i = 0; i < 2 * SCENARIO_CAP; i++) dans.unshift((await api.post(dan, { actor: 'dan', verb: 'post', object: `d${i}` })).body);
      expect(await api.api.follow(alice, bob, { copyLimit: 2 })).toEqual({ status: 'following' });
      await api.follow(carol, bob);
      const later = (await api.post(bob, { actor: 'bob', verb: 'post', object: 'later' })).body;
      // Posted after the follow, however old its time: it belongs.
      const backdated = (await api.post(bob, { actor: 'bob', verb: 'post', object: 'backdated', time: '2020-01-01T00:00:00.000Z' })).body;
      const followed = newestFirst([...dans, older[0]!, older[1]!, later, backdated]);
      await timelineEquals(alice, () => followed);
      expect(ids(await api.readAll(alice, 1))).toEqual(ids(followed));
      expect(ids(await api.readAll(alice, 3))).toEqual(ids(followed));

      await api.api.unfollow(alice, bob, { keepHistory: true });
      expect(ids(await api.readAll(alice, 2))).toEqual(ids(followed));
      const after = (await api.post(bob, { actor: 'bob', verb: 'post', object: 'after' })).body;
      const afterBackdated = (await api.post(bob, { actor: 'bob', verb: 'post', object: 'after, backdated', time: '2020-01-02T00:00:00.000Z' })).body;
      await timelineEquals(carol, () => newestFirst([...older, later, backdated, after, afterBackdated]));
      expect(ids(await api.readAll(alice, 1))).toEqual(ids(followed));
      // A kept edge is not a follow: neither listed nor counted.
      expect((await api.api.following(alice)).items).toEqual([{ feed: dan }]);
      expect(await api.api.counts(bob)).toEqual({ followers: 1, following: 0 });
      // A removal reaches the kept history.
      expect((await api.remove(bob, older[0]!.id)).status).toBe(204);
      const kept = followed.filter((a) => a.id !== older[0]!.id);
      await timelineEquals(alice, () => kept);

      // The log holds the options: rebuilt from it, the timelines show the same pages.
      await api.api.startRebuild();
      await waitFor(async () => ((await api.api.rebuildStatus()).state === 'done' ? true : undefined), { what: 'the timeline rebuild to finish' });
      expect(ids(await api.readAll(alice, 1))).toEqual(ids(kept));
      expect(ids(await api.readAll(alice, 4))).toEqual(ids(kept));
      expect(ids(await api.readAll(carol, 2))).toEqual(ids(newestFirst([...older.slice(1), later, backdated, after, afterBackdated])));

      // A plain follow again brings the whole history back.
      expect((await api.follow(alice, bob)).status).toBe(204);
      await timelineEquals(alice, () => newestFirst([...dans, ...older.slice(1), later, backdated, after, afterBackdated]));
    });

    it('raises only what a copy limit let in when activities are bumped in a relevancy timeline', async () => {
      const [bob, hot, all] = [feed('user', 'bob'), feed('hot', 'alice'), feed('hot', 'carol')];
      const posts: Activity[] = [];
      for (let i = 0; i < 4; i++) posts.unshift((await api.post(bob, { actor: 'bob', verb: 'post', object: `o${i}` })).body);
      expect(await api.api.follow(hot, bob, { copyLimit: 1 })).toEqual({ status: 'following' });
      await api.follow(all, bob);
      const bump = (activity: Activity, time: string) => api.api.bumpActivity(bob, activity.id, time);
      // The oldest, left out by the copy limit, rises for a reader that follows the whole feed only.
      const risen = await bump(posts[3]!, '2099-01-01T00:00:00.000Z');
      await timelineEquals(all, () => [risen, posts[0]!, posts[1]!, posts[2]!]);
      await timelineEquals(hot, () => [posts[0]!]);
      expect(ids(await api.readAll(hot, 1))).toEqual([posts[0]!.id]);
      const copied = await bump(posts[0]!, '2099-01-02T00:00:00.000Z');
      await timelineEquals(hot, () => [copied]);
    });

    it('answers bad follow options with a 400 naming the parameter, and writes nothing', async () => {
      const [bob, alice] = [feed('user', 'bob'), feed('timeline', 'alice')];
      const follows = `/v1/feeds/${alice.replace(':', '/')}/follows/${bob.replace(':', '/')}`;
      // Sent as written, past the typed client, which would not send these.
      const cases: Array<[string, string, string]> = [
        ['PUT', `${follows}?copyLimit=-1`, 'query.copyLimit'],
        ['PUT', `${follows}?copyLimit=two`, 'query.copyLimit'],
        ['PUT', `${follows}?copyLimit=${SCENARIO_CAP + 1}`, 'query.copyLimit'],
        ['PUT', `${follows}?copylimit=2`, 'query.copylimit'],
        ['DELETE', `${follows}?keepHistory=yes`, 'query.keepHistory'],
      ];
      for (const [method, url, field] of cases) {
        const result = await api.call(method, url);
        expect({ url, status: result.status, body: result.body }).toEqual({ url, status: 400, body: expect.objectContaining({ code: 'invalid_request', field, message: expect.stringContaining(field) }) });
      }
      expect(await api.api.counts(alice)).toEqual({ followers: 0, following: 0 });
      expect(await api.api.follow(alice, bob, { copyLimit: SCENARIO_CAP })).toEqual({ status: 'following' });
      await api.api.unfollow(alice, bob, { keepHistory: false });
      expect(await api.api.counts(alice)).toEqual({ followers: 0, following: 0 });
    });

    it('raises a bumped activity in relevancy-ordered timelines only', async () => {
      const [bob, alice, carol] = [feed('user', 'bob'), feed('timeline', 'alice'), feed('hot', 'carol')];
      await api.follow(alice, bob);
      await api.follow(carol, bob);
      const older = (await api.post(bob, { actor: 'bob', verb: 'post', object: 'old', time: '2026-01-01T00:00:01.000Z' })).body;
      const newer = (await api.post(bob, { actor: 'bob', verb: 'post', object: 'new', time: '2026-01-01T00:00:02.000Z' })).body;
      await timelineEquals(carol, () => [newer, older]);
      const bumped = await api.api.bumpActivity(bob, older.id, '2026-01-01T00:00:03.000Z');
      expect(bumped).toEqual({ ...older, bumpedAt: '2026-01-01T00:00:03.000Z' });
      await timelineEquals(carol, () => [bumped, newer]);
      await timelineEquals(alice, () => [newer, older]);
      // A bump no later than the activity's relevance changes nothing.
      expect(await api.api.bumpActivity(bob, older.id, '2026-01-01T00:00:00.000Z')).toEqual(bumped);
      await expect(api.api.bumpActivity(bob, 'nope')).rejects.toMatchObject({ status: 404, code: 'activity_not_found' });
      await expect(api.api.bumpActivity(bob, older.id, 'later')).rejects.toMatchObject({ status: 400, code: 'invalid_request', field: 'body.time' });
    });

    it('updates an activity in place: its feed and every timeline show the new version where the old one was', async () => {
      const [bob, dan, alice, carol] = [feed('user', 'bob'), feed('user', 'dan'), feed('timeline', 'alice'), feed('hot', 'carol')];
      await api.follow(alice, bob);
      await api.follow(carol, bob);
      const posted: Activity[] = [];
      for (let i = 0; i < 3; i++) {
        const time = new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString();
        posted.unshift((await api.post(bob, { actor: 'bob', verb: 'post', object: `photo:${i}`, time, extra: { caption: `take ${i}` } })).body);
      }
      const [newest, middle, oldest] = posted as [Activity, Activity, Activity];
      await timelineEquals(alice, () => posted);
      await timelineEquals(carol, () => posted);
      // A reader part way through: the first page read before the update, the next after it.
      const first = await api.page(alice, 1);
      expect(first.body.items).toEqual([newest]);

      const updated = await api.api.updateActivity(bob, middle.id, { object: 'photo:1-cropped', extra: { caption: 'cropped', tags: ['sky'] } });
      expect(updated).toEqual({ ...middle, object: 'photo:1-cropped', extra: { caption: 'cropped', tags: ['sky'] }, updatedAt: expect.any(String) });
      expect(Date.parse(updated.updatedAt!)).toBeGreaterThan(Date.parse(middle.time));
      const now = [newest, updated, oldest];
      for (const reader of [alice, carol]) {
        await waitFor(async () => (isDeepStrictEqual(await api.readAll(reader, 2), now) ? true : undefined), { what: `${reader} to show the updated activity in its place` });
      }
      expect((await api.page(bob)).body.items).toEqual(now);
      expect((await api.page(alice, 2, first.body.next!)).body.items).toEqual([updated, oldest]);

      // The same changes again record nothing and answer the activity as it is; an extra of {} empties it.
      expect(await api.api.updateActivity(bob, middle.id, { object: 'photo:1-cropped' })).toEqual(updated);
      const emptied = await api.api.updateActivity(bob, middle.id, { extra: {} });
      expect(emptied).toMatchObject({ id: middle.id, object: 'photo:1-cropped', extra: {} });
      await waitFor(async () => (isDeepStrictEqual((await api.readAll(alice))[1], emptied) ? true : undefined), { what: `${alice} to show the emptied extra` });

      // Sent as written, past the typed client, which would not send most of these.
      const path = `/v1/feeds/${bob.replace(':', '/')}/activities/${middle.id}`;
      const cases: Array<[string, () => Promise<{ status: number; body: unknown }>, number, string, string]> = [
        ['no change given', () => api.call('PATCH', path, {}), 400, 'invalid_request', 'body'],
        ['no body', () => api.call('PATCH', path), 400, 'invalid_request', 'body'],
        ['object of the wrong type', () => api.call('PATCH', path, { object: 7 }), 400, 'invalid_request', 'body.object'],
        ['a field that cannot change', () => api.call('PATCH', path, { object: 'x', verb: 'like' }), 400, 'invalid_request', 'body.verb'],
        ['extra that is not an object', () => api.call('PATCH', path, { extra: 'text' }), 400, 'invalid_request', 'body.extra'],
        ['an unknown activity', () => api.call('PATCH', `/v1/feeds/${bob.replace(':', '/')}/activities/nope`, { object: 'x' }), 404, 'activity_not_found', 'activityId'],
        ['another feed’s activity', () => api.call('PATCH', `/v1/feeds/${dan.replace(':', '/')}/activities/${middle.id}`, { object: 'x' }), 404, 'activity_not_found', 'activityId'],
        ['a timeline', () => api.call('PATCH', `/v1/feeds/${alice.replace(':', '/')}/activities/${middle.id}`, { object: 'x' }), 400, 'group_not_writable', 'group'],
      ];
      for (const [what, send, status, code, field] of cases) {
        const result = await send();
        expect({ what, status: result.status, body: result.body }).toEqual({ what, status, body: expect.objectContaining({ code, field, message: expect.any(String) }) });
      }
      expect((await api.readAll(bob))[1]).toEqual(emptied);
    });

    it('shows an old but bumped activity first to a relevancy reader who follows after the bump', async () => {
      const [bob, carol] = [feed('user', 'bob'), feed('hot', 'carol')];
      const posted: Activity[] = [];
      for (let i = 0; i < 2 * SCENARIO_CAP; i++) {
        const time = new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString();
        posted.push((await api.post(bob, { actor: 'bob', verb: 'post', object: `o${i}`, time })).body);
      }
      const bumped = await api.api.bumpActivity(bob, posted[0]!.id, '2026-01-01T01:00:00.000Z');
      expect((await api.follow(carol, bob)).status).toBe(204);
      await timelineEquals(carol, () => [bumped, ...posted.slice(1).reverse()]);
    });

    it('backfills a reader whose cap passes what one request carries, with a history of large activities that passes one message', async () => {
      const [bob, dora] = [feed('user', 'bob'), feed('deep', 'dora')];
      const text = 'x'.repeat(60_000);
      const posted: Activity[] = [];
      for (let i = 0; i < 20; i++) posted.unshift((await api.post(bob, { actor: 'bob', verb: 'post', object: `big${i}`, extra: { text } })).body);
      expect((await api.follow(dora, bob)).status).toBe(204);
      await timelineEquals(dora, () => posted);
      const later = (await api.post(bob, { actor: 'bob', verb: 'post', object: 'small' })).body;
      await timelineEquals(dora, () => [later, ...posted]);
    });

    it('returns the first activity again for a repeated foreignId and appends nothing', async () => {
      const bob = feed('user', 'bob');
      const first = await api.post(bob, { actor: 'bob', verb: 'like', object: 'post:9', foreignId: 'like-9' });
      const again = await api.post(bob, { actor: 'bob', verb: 'like', object: 'post:9', foreignId: 'like-9' });
      expect(again.status).toBe(201);
      expect(again.body).toEqual(first.body);
      expect(ids(await api.readAll(bob))).toEqual([first.body.id]);
    });

    it('pages followers and following and counts them', async () => {
      const bob = feed('user', 'bob');
      const readers = Array.from({ length: 7 }, (_, i) => feed('timeline', `r${i}`));
      for (const reader of readers) await api.follow(reader, bob);
      await api.follow(readers[0]!, feed('user', 'dan'));
      const seen: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await api.api.followers(bob, { limit: 3, cursor });
        expect(page.items.length).toBeLessThanOrEqual(3);
        seen.push(...page.items.map((i) => i.feed));
        cursor = page.next ?? undefined;
      } while (cursor);
      expect(seen).toEqual([...readers].sort());
      const following = await api.api.following(readers[0]!);
      expect(following.items.map((i) => i.feed)).toEqual([bob, feed('user', 'dan')].sort());
      expect(await api.api.counts(bob)).toEqual({ followers: 7, following: 0 });
    });

    const groupsOf = (reader: FeedId, limit = 25, cursor?: string) => api.api.readGroups(reader, { limit, cursor });
    const groupsShow = (reader: FeedId, shape: string) =>
      waitFor(
        async () => {
          const page = await groupsOf(reader);
          return page.items.map((g) => `${g.verb} ${g.object ?? ''} ${g.activityCount}`).join(', ') === shape ? page : undefined;
        },
        { what: `${reader} to show the groups ${shape}` },
      );
    const at = (minute: number) => new Date(Date.UTC(2026, 2, 1, 10, minute)).toISOString();

    it('reads an aggregated feed as groups, newest first, paged with one cursor; new activities, removals and updates reach inside groups', async () => {
      const [bob, carol, reader] = [feed('user', 'bob'), feed('user', 'carol'), feed('digest', 'ann')];
      await api.follow(reader, bob);
      await api.follow(reader, carol);
      await api.post(bob, { actor: 'bob', verb: 'like', object: 'post:1', time: at(1) });
      await api.post(carol, { actor: 'carol', verb: 'like', object: 'post:1', time: at(2) });
      const comment = (await api.post(bob, { actor: 'bob', verb: 'comment', object: 'post:1', time: at(3) })).body;
      const like2 = (await api.post(carol, { actor: 'carol', verb: 'like', object: 'post:2', time: at(4) })).body;
      await groupsShow(reader, 'like post:2 1, comment post:1 1, like post:1 2');
      const first = await groupsOf(reader, 2);
      expect(first.items.map((g) => g.object)).toEqual(['post:2', 'post:1']);
      expect(first.next).toEqual(expect.any(String));
      const second = await groupsOf(reader, 2, first.next!);
      expect(second.items).toHaveLength(1);
      expect(second.items[0]).toMatchObject({ verb: 'like', object: 'post:1', activityCount: 2, actorCount: 2, actors: ['carol', 'bob'], time: at(1), updatedAt: at(2) });
      expect(second.items[0]!.activities.map((a) => a.actor)).toEqual(['carol', 'bob']);
      expect(second.next).toBeNull();
      expect(first).not.toHaveProperty('unseen');
      // A new like moves its group to the top; a removal and an update reach inside groups.
      await api.post(carol, { actor: 'dan', verb: 'like', object: 'post:1', time: at(5) });
      await groupsShow(reader, 'like post:1 3, like post:2 1, comment post:1 1');
      expect((await api.remove(carol, like2.id)).status).toBe(204);
      await api.api.updateActivity(bob, comment.id, { object: 'post:3' });
      const after = await groupsShow(reader, 'like post:1 3, comment post:3 1');
      expect(after.items[0]).toMatchObject({ actorCount: 3, actors: ['dan', 'carol', 'bob'] });
      await expect(groupsOf(reader, 25, 'bm90LWEtY3Vyc29y')).rejects.toMatchObject({ status: 400, code: 'invalid_cursor', field: 'query.cursor' });
    });

    notificationsIt('keeps what a notification feed’s reader has seen and read, and refuses bad marks writing nothing', async () => {
      const [bob, reader] = [feed('user', 'bob'), feed('alerts', 'ann')];
      const path = (mark: string) => `/v1/feeds/${reader.replace(':', '/')}/${mark}`;
      await api.follow(reader, bob);
      await api.post(bob, { actor: 'bob', verb: 'like', object: 'post:1', time: at(1) });
      await api.post(bob, { actor: 'bob', verb: 'comment', object: 'post:1', time: at(2) });
      const fresh = await groupsShow(reader, 'comment post:1 1, like post:1 1');
      expect(fresh).toMatchObject({ unseen: 2, unread: 2 });
      expect(fresh.items.map((g) => [g.seen, g.read])).toEqual([[false, false], [false, false]]);
      const [comment, like] = fresh.items;
      expect(await api.api.markSeen(reader, { ids: [like!.id] })).toEqual({ unseen: 1, unread: 2 });
      expect((await groupsOf(reader)).items.map((g) => [g.seen, g.read])).toEqual([[false, false], [true, false]]);
      // Sent as written, past the typed client, which would not send most of these.
      const refused: Array<[unknown, string, number, string]> = [
        [{}, 'seen', 400, 'body'],
        [{ ids: 'x' }, 'seen', 400, 'body.ids'],
        [{ ids: [comment!.id], all: true }, 'read', 400, 'body'],
        [{ all: false }, 'read', 400, 'body.all'],
        [{ ids: ['no-such-group'] }, 'read', 400, 'ids'],
      ];
      for (const [body, mark, status, field] of refused) {
        const result = await api.call('POST', path(mark), body);
        expect({ body, status: result.status, error: result.body }).toEqual({ body, status, error: expect.objectContaining({ code: 'invalid_request', field }) });
      }
      // An aggregated feed that keeps no marks, and a producer feed.
      for (const other of [`digest:${reader.split(':')[1]}` as FeedId, bob]) {
        await expect(api.api.markSeen(other, { all: true })).rejects.toMatchObject({ status: 400, code: 'invalid_request', field: 'group' });
      }
      expect(await groupsOf(reader)).toMatchObject({ unseen: 1, unread: 2 });
      expect(await api.api.markRead(reader, { all: true })).toEqual({ unseen: 0, unread: 0 });
      expect((await groupsOf(reader)).unread).toBe(0);
      // A group that grows is new again.
      await api.post(bob, { actor: 'cat', verb: 'like', object: 'post:1', time: at(3) });
      const grown = await groupsShow(reader, 'like post:1 2, comment post:1 1');
      expect(grown).toMatchObject({ unseen: 1, unread: 1 });
      expect(grown.items.map((g) => [g.seen, g.read])).toEqual([[false, false], [true, true]]);
      // A new group whose activity carries an older time (a backdated post) is new too.
      expect(await api.api.markRead(reader, { all: true })).toEqual({ unseen: 0, unread: 0 });
      await api.post(bob, { actor: 'bob', verb: 'share', object: 'post:0', time: at(0) });
      const backdated = await groupsShow(reader, 'like post:1 2, comment post:1 1, share post:0 1');
      expect(backdated).toMatchObject({ unseen: 1, unread: 1 });
      expect(backdated.items.map((g) => g.seen)).toEqual([true, true, false]);
    });

    it('streams a notification feed’s groups: a reset, then group events for a new group, one that grew and moved to the top, a marking and one taken out, resumed after Last-Event-ID', async () => {
      const [bob, carol, reader] = [feed('user', 'bob'), feed('user', 'carol'), feed('alerts', 'ann')];
      await api.follow(reader, bob);
      await api.follow(reader, carol);
      await api.post(bob, { actor: 'bob', verb: 'like', object: 'post:1', time: at(1) });
      await groupsShow(reader, 'like post:1 1');
      const stream = api.api.stream(reader, { reconnect: false });
      try {
        const reset = await nextStreamEvent(stream);
        expect(reset).toMatchObject({ type: 'reset', data: { groups: [{ verb: 'like', object: 'post:1', activityCount: 1, seen: false }], unseen: 1, unread: 1 } });
        const likeGroup = reset.type === 'reset' && 'groups' in reset.data ? reset.data.groups[0]!.id : '';
        // A new group goes on top; the one below it has not changed and gets no event.
        const comment = (await api.post(carol, { actor: 'carol', verb: 'comment', object: 'post:1', time: at(2) })).body;
        const added = await nextStreamEvent(stream);
        expect(added).toMatchObject({ type: 'group', data: { group: { verb: 'comment', object: 'post:1', activityCount: 1, activities: [comment] }, rank: 0, unseen: 2, unread: 2 } });
        const commentGroup = added.type === 'group' && 'group' in added.data ? added.data.group.id : '';
        // A group that gains an activity changes and moves to the top.
        await api.post(carol, { actor: 'carol', verb: 'like', object: 'post:1', time: at(3) });
        expect(await nextStreamEvent(stream)).toMatchObject({ type: 'group', data: { group: { id: likeGroup, activityCount: 2, actors: ['carol', 'bob'] }, rank: 0 } });
        // Marked seen: the group says so where it is, and the counts follow.
        expect(await api.api.markSeen(reader, { ids: [likeGroup] })).toEqual({ unseen: 1, unread: 2 });
        expect(await nextStreamEvent(stream)).toMatchObject({ type: 'group', data: { group: { id: likeGroup, seen: true, read: false }, rank: 0, unseen: 1, unread: 2 } });
        // Its only activity removed, a group leaves the page.
        expect((await api.remove(carol, comment.id)).status).toBe(204);
        expect(await nextStreamEvent(stream)).toEqual({ id: expect.any(String), type: 'group', data: { removed: commentGroup, unseen: 0, unread: 1 } });
      } finally {
        stream.close();
      }
      // Missed while away: sent on resume, numbered on from the same ring.
      await api.post(bob, { actor: 'bob', verb: 'share', object: 'post:9', time: at(4) });
      const resumed = api.api.stream(reader, { reconnect: false, lastEventId: stream.lastEventId });
      try {
        const missed = await nextStreamEvent(resumed);
        expect(missed).toMatchObject({ type: 'group', data: { group: { verb: 'share', object: 'post:9' }, rank: 0, unseen: 1, unread: 2 } });
        expect(missed.id.replace(/-\d+$/, '')).toBe(stream.lastEventId!.replace(/-\d+$/, ''));
      } finally {
        resumed.close();
      }
    });

    it('hides an activity from its reader’s own timeline on every page and cursor, lists what is hidden, shows it again, and refuses bad hiding writing nothing', async () => {
      const [bob, alice, carol] = [feed('user', 'bob'), feed('timeline', 'alice'), feed('timeline', 'carol')];
      const at = (second: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString();
      await api.follow(alice, bob);
      await api.follow(carol, bob);
      const posted: Activity[] = [];
      // Past the cap, so that hidden entries sit in the stored part and in the pulled one.
      for (let i = 0; i < 2 * SCENARIO_CAP; i++) posted.push((await api.post(bob, { actor: 'bob', verb: 'post', object: `h${i}`, time: at(i + 1) })).body);
      const newestFirst = [...posted].reverse();
      await timelineEquals(alice, () => newestFirst);
      await timelineEquals(carol, () => newestFirst);
      const alicePath = `/v1/feeds/${alice.replace(':', '/')}/hidden`;
      const [newest, middle, oldest] = [newestFirst[0]!, newestFirst[SCENARIO_CAP]!, newestFirst[newestFirst.length - 1]!];
      for (const activity of [newest, middle, oldest]) expect(await api.api.hideActivity(alice, activity.id)).toEqual({ id: activity.id, hidden: true });
      // Hiding twice is one hiding.
      expect(await api.api.hideActivity(alice, middle.id)).toEqual({ id: middle.id, hidden: true });
      const hidden = new Set([newest.id, middle.id, oldest.id]);
      const visible = newestFirst.filter((activity) => !hidden.has(activity.id));
      // Read at once, page by page with small pages (each full but the last): no hidden entry on any.
      expect(ids(await api.readAll(alice, 3))).toEqual(ids(visible));
      const firstPage = (await api.page(alice, 3)).body;
      expect(ids(firstPage.items)).toEqual(ids(visible.slice(0, 3)));
      // Only alice's timeline: carol still sees everything.
      expect(ids(await api.readAll(carol, 4))).toEqual(ids(newestFirst));
      // The list, newest hiding first, page by page.
      const listed: string[] = [];
      for await (const entry of api.api.hiddenItems(alice, { limit: 2 })) listed.push(entry.id);
      expect(listed).toEqual([oldest.id, middle.id, newest.id]);
      const firstList = await api.api.readHidden(alice, { limit: 2 });
      expect({ count: firstList.items.length, more: firstList.next !== null }).toEqual({ count: 2, more: true });
      // An activity of a private feed alice does not follow is not found, as an unknown one is.
      const dan = feed('user', 'dan');
      expect(await api.api.putSettings(dan, { private: true })).toEqual({ private: true });
      const secret = (await api.post(dan, { actor: 'dan', verb: 'post', object: 'secret', time: at(100) })).body;
      // Refused, writing nothing (sent as written, past the typed client, which would not send some of these).
      const refused: Array<[string, string, string, number, string, string]> = [
        ['unknown activity', 'PUT', `${alicePath}/no-such-activity`, 404, 'activity_not_found', 'activityId'],
        ['an activity alice may not read', 'PUT', `${alicePath}/${secret.id}`, 404, 'activity_not_found', 'activityId'],
        ['a producer feed', 'PUT', `/v1/feeds/${bob.replace(':', '/')}/hidden/${middle.id}`, 400, 'invalid_request', 'group'],
        ['an unknown group', 'PUT', `/v1/feeds/nope/x/hidden/${middle.id}`, 404, 'unknown_group', 'group'],
        ['a malformed id', 'PUT', `${alicePath}/b%20d`, 400, 'invalid_request', 'activityId'],
        ['a bad list cursor', 'GET', `${alicePath}?cursor=zzz`, 400, 'invalid_cursor', 'query.cursor'],
        ['a bad list limit', 'GET', `${alicePath}?limit=0`, 400, 'invalid_request', 'query.limit'],
      ];
      for (const [what, method, path, status, code, field] of refused) {
        const result = await api.call(method, path);
        expect({ what, status: result.status, error: result.body }).toEqual({ what, status, error: expect.objectContaining({ code, field }) });
      }
      if (tokenFor) {
        // Another user may neither hide in alice's timeline, nor show, nor list.
        const asCarol = new FeedmillClient({ baseUrl: deployment.baseUrl, token: await tokenFor(carol.split(':')[1]) });
        for (const [what, call] of [['hide', () => asCarol.hideActivity(alice, posted[1]!.id)], ['show', () => asCarol.showActivity(alice, middle.id)], ['list', () => asCarol.readHidden(alice)]] as const) {
          await expect(call().catch((error: FeedmillApiError) => ({ what, status: error.status, code: error.code }))).resolves.toEqual({ what, status: 403, code: 'forbidden' });
        }
      }
      expect(ids(await api.readAll(alice, 5))).toEqual(ids(visible));
      expect((await api.api.readHidden(alice)).items.map((entry) => entry.id)).toEqual([oldest.id, middle.id, newest.id]);
      // Shown again: back in its place; showing twice changes nothing.
      expect(await api.api.showActivity(alice, middle.id)).toEqual({ id: middle.id, hidden: false });
      expect(await api.api.showActivity(alice, middle.id)).toEqual({ id: middle.id, hidden: false });
      expect(ids(await api.readAll(alice, 4))).toEqual(ids(newestFirst.filter((activity) => activity.id !== newest.id && activity.id !== oldest.id)));
      expect((await api.api.readHidden(alice)).items.map((entry) => entry.id)).toEqual([oldest.id, newest.id]);
    });

    it('reads a slice: every activity that refers to a ref, whatever its feed, newest first with one cursor; an update keeps it there, a removal takes it out', async () => {
      const [bob, dan] = [feed('user', 'bob'), feed('user', 'dan')];
      const [applicant, position] = [`applicant:t${run}-17`, `position:t${run}-3`];
      const at = (second: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, second)).toISOString();
      const first = (await api.post(bob, { actor: 'bob', verb: 'review', object: 'cv', time: at(1), refs: [applicant, position] })).body;
      const second = (await api.post(dan, { actor: 'dan', verb: 'interview', object: 'call', time: at(2), refs: [applicant] })).body;
      const third = (await api.post(bob, { actor: 'bob', verb: 'open', object: 'role', time: at(3), refs: [position] })).body;
      await api.post(bob, { actor: 'bob', verb: 'post', object: 'unrelated', time: at(4) });
      expect(first.refs).toEqual([applicant, position]);
      const slice = async (ref: string, limit = 25) => {
        const items: Activity[] = [];
        for await (const activity of api.api.sliceItems(ref, { limit })) items.push(activity);
        return items;
      };
      expect(ids(await slice(applicant, 1))).toEqual([second.id, first.id]);
      expect(await slice(position)).toEqual([third, first]);
      expect(await slice(`applicant:t${run}-18`)).toEqual([]);
      const page = await api.api.readSlice(applicant, { limit: 1 });
      expect({ items: ids(page.items), more: page.next !== null }).toEqual({ items: [second.id], more: true });
      expect(ids((await api.api.readSlice(applicant, { limit: 1, cursor: page.next! })).items)).toEqual([first.id]);
      // An update keeps the refs (they are fixed when the activity is added).
      const edited = await api.api.updateActivity(bob, first.id, { object: 'cv, second look' });
      expect(await slice(position)).toEqual([third, edited]);
      if (tokenFor) {
        // A private feed's activities are left out for a reader who may not read it, kept for its owner and its approved followers.
        const carol = feed('timeline', 'carol');
        const asUser = async (feedId: FeedId) => new FeedmillClient({ baseUrl: deployment.baseUrl, token: await tokenFor(feedId.split(':')[1]) });
        const [asCarol, asDan] = [await asUser(carol), await asUser(dan)];
        expect(await api.api.putSettings(dan, { private: true })).toEqual({ private: true });
        const carolSees = async () => ids((await asCarol.readSlice(applicant, { limit: 1 })).items);
        expect(await carolSees()).toEqual([first.id]);
        expect(ids((await asDan.readSlice(applicant)).items)).toEqual([second.id, first.id]);
        expect((await api.follow(carol, dan)).status).toBe(202);
        await api.api.approveFollowRequest(dan, carol);
        expect(await carolSees()).toEqual([second.id]);
      }
      expect((await api.remove(bob, first.id)).status).toBe(204);
      expect(ids(await slice(applicant))).toEqual([second.id]);
      expect(ids(await slice(position))).toEqual([third.id]);
    });

    it('answers bad input with a 4xx naming the problem, and writes nothing', async () => {
      const bob = feed('user', 'bob');
      const path = `/v1/feeds/${bob.replace(':', '/')}/activities`;
      // Sent as written, past the typed client, which would not send these.
      const cases: Array<[string, () => Promise<{ status: number; body: unknown }>, number, string, string?]> = [
        ['malformed JSON', () => api.call('POST', path, '{"actor":'), 400, 'invalid_json', 'body'],
        ['missing field', () => api.call('POST', path, { actor: 'bob', verb: 'post' }), 400, 'invalid_request', 'body.object'],
        ['unknown field', () => api.call('POST', path, { actor: 'bob', verb: 'post', object: 'x', mood: 'happy' }), 400, 'invalid_request', 'body.mood'],
        ['wrong type', () => api.call('POST', path, { actor: 'bob', verb: 7, object: 'x' }), 400, 'invalid_request', 'body.verb'],
        ['bad time', () => api.call('POST', path, { actor: 'bob', verb: 'post', object: 'x', time: 'soon' }), 400, 'invalid_request', 'body.time'],
        ['target not a feed', () => api.call('POST', path, { actor: 'bob', verb: 'post', object: 'x', to: ['nobody'] }), 400, 'invalid_request', 'body.to[0]'],
        ['target named twice', () => api.call('POST', path, { actor: 'bob', verb: 'post', object: 'x', to: [feed('notify', 'c'), feed('notify', 'c')] }), 400, 'invalid_request', 'body.to'],
        ['target a producer feed', () => api.call('POST', path, { actor: 'bob', verb: 'post', object: 'x', to: [feed('notify', 'c'), feed('user', 'c')] }), 400, 'invalid_request', 'body.to[1]'],
        ['ref not kind:id', () => api.call('POST', path, { actor: 'bob', verb: 'post', object: 'x', refs: ['applicant:1', 'nobody'] }), 400, 'invalid_request', 'body.refs[1]'],
        ['ref named twice', () => api.call('POST', path, { actor: 'bob', verb: 'post', object: 'x', refs: ['applicant:1', 'applicant:1'] }), 400, 'invalid_request', 'body.refs'],
        ['over 20 refs', () => api.call('POST', path, { actor: 'bob', verb: 'post', object: 'x', refs: Array.from({ length: 21 }, (_, i) => `applicant:${i}`) }), 400, 'invalid_request', 'body.refs'],
        ['slice of a malformed ref', () => api.call('GET', '/v1/refs/applicant/activities'), 400, 'invalid_request', 'ref'],
        ['slice limit out of range', () => api.call('GET', '/v1/refs/applicant:1/activities?limit=0'), 400, 'invalid_request', 'query.limit'],
        ['slice with a bad cursor', () => api.call('GET', '/v1/refs/applicant:1/activities?cursor=bm90LWEtY3Vyc29y'), 400, 'invalid_cursor', 'query.cursor'],
        ['over 100 targets', () => api.call('POST', path, { actor: 'bob', verb: 'post', object: 'x', to: Array.from({ length: 101 }, (_, i) => feed('notify', `c${i}`)) }), 400, 'invalid_request', 'body.to'],
        ['body over the limit', () => api.call('POST', path, { actor: 'x'.repeat(70_000), verb: 'post', object: 'x' }), 413, 'payload_too_large', 'body'],
        ['id with bad characters', () => api.call('POST', '/v1/feeds/user/b%20b/activities', { actor: 'b', verb: 'p', object: 'x' }), 400, 'invalid_request', 'id'],
        ['id over 128 characters', () => api.call('POST', `/v1/feeds/user/${'b'.repeat(129)}/activities`, { actor: 'b', verb: 'p', object: 'x' }), 400, 'invalid_request', 'id'],
        ['unknown group', () => api.call('POST', '/v1/feeds/shop/1/activities', { actor: 'b', verb: 'p', object: 'x' }), 404, 'unknown_group', 'group'],
        ['post to a timeline', () => api.call('POST', '/v1/feeds/timeline/x/activities', { actor: 'b', verb: 'p', object: 'x' }), 400, 'group_not_writable', 'group'],
        ['producer following', () => api.call('PUT', `/v1/feeds/user/x/follows/user/y`), 400, 'group_cannot_follow', 'group'],
        ['limit out of range', () => api.call('GET', `/v1/feeds/${bob.replace(':', '/')}?limit=1000`), 400, 'invalid_request', 'query.limit'],
        ['unknown query field', () => api.call('GET', `/v1/feeds/${bob.replace(':', '/')}?lmit=3`), 400, 'invalid_request', 'query.lmit'],
        ['bad cursor', () => api.call('GET', `/v1/feeds/${bob.replace(':', '/')}?cursor=bm90LWEtY3Vyc29y`), 400, 'invalid_cursor', 'query.cursor'],
        ['query field on counts', () => api.call('GET', `/v1/feeds/${bob.replace(':', '/')}/counts?x=1`), 400, 'invalid_request', 'query.x'],
        ['query field on settings', () => api.call('GET', `/v1/feeds/${bob.replace(':', '/')}/settings?x=1`), 400, 'invalid_request', 'query.x'],
        ['settings of a timeline', () => api.call('GET', '/v1/feeds/timeline/x/settings'), 404, 'not_found', 'group'],
        ['unknown activity', () => api.call('DELETE', `${path}/nope`), 404, 'activity_not_found', 'activityId'],
      ];
      for (const [what, send, status, code, field] of cases) {
        const result = await send();
        expect({ what, status: result.status, body: result.body }).toEqual({
          what,
          status,
          body: expect.objectContaining({ code, message: expect.any(String), ...(field ? { field } : {}) }),
        });
      }
      expect(await api.readAll(bob)).toEqual([]);
      expect(await api.api.counts('user:x')).toEqual({ followers: 0, following: 0 });
    });
  });
}
