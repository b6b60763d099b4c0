import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { FeedmillClient } from '@feedmill/client';
import type { FeedId } from '@feedmill/contracts';
import { CHROMIUM_FLAGS, findOrInstallChromium, hs256Tokens, startStandalone, type Deployment } from '@feedmill/harness';

/**
 * The web console at `/`, driven in a real browser (Debian's Chromium, found or installed
 * here) against a running standalone that checks tokens: each tab pastes its user's token,
 * one posts and the other sees the post arrive through the feed's stream, without reloading.
 */
const secret = 'console secret of sixteen characters or more';
const tokenFor = hs256Tokens(secret);
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

let deployment: Deployment;
let dir: string;
let browser: Browser;

beforeAll(async () => {
  const executablePath = findOrInstallChromium();
  dir = await mkdtemp(join(tmpdir(), 'feedmill-console-'));
  const feedConfig = join(dir, 'feeds.json');
  await writeFile(feedConfig, JSON.stringify({ groups: { user: { kind: 'producer' }, timeline: { kind: 'timeline', model: 'cache', cap: 800 }, alerts: { kind: 'timeline', model: 'ring', cap: 100, notifications: true } } }));
  [deployment, browser] = await Promise.all([
    startStandalone({ dataDir: join(dir, 'data'), env: { FEEDMILL_JWT_SECRET: secret, FEED_CONFIG: feedConfig } }),
    chromium.launch({ executablePath, args: CHROMIUM_FLAGS }),
  ]);
});
afterAll(async () => {
  await browser?.close();
  await deployment?.stop();
  await rm(dir, { recursive: true, force: true });
});

/** A tab with the console open, the user's token pasted and `feed` opened. */
async function consoleTab(user: string, feed: string): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1100, height: 700 } });
  await page.goto(`${deployment.baseUrl}/`);
  await page.fill('#token', await tokenFor(user));
  await page.dispatchEvent('#token', 'change');
  await openFeed(page, feed);
  return page;
}

async function openFeed(page: Page, feed: string): Promise<void> {
  await page.fill('#feed', feed);
  await page.click('#open');
  await page.locator('#status', { hasText: `read ${feed}` }).waitFor({ timeout: 10_000 });
}

const shownObjects = (page: Page) => page.locator('#items li code').allTextContents();

it('reads a feed page by page, follows, sees a post from another tab arrive live, watches a notification feed’s groups grow, unfollows, and shows the API’s errors', async () => {
  const alice = await consoleTab('alice', 'timeline:alice');
  await alice.fill('#follow-target', 'user:bob');
  await alice.click('#follow');
  await alice.locator('#status', { hasText: 'timeline:alice follows user:bob' }).waitFor();
  // The stream's first event (a reset) has arrived: the tab is live.
  await alice.locator('#live-state', { hasText: 'streaming' }).waitFor({ timeout: 10_000 });

  const bob = await consoleTab('bob', 'user:bob');
  await bob.fill('#post-object', 'photo:sunset');
  await bob.click('#post');
  await bob.locator('#status', { hasText: 'posted' }).waitFor();
  expect(await bob.textContent('#status')).toMatch(/^posted [0-9a-f-]{36} to user:bob$/);

  // Alice's tab did nothing since: the entry came through the stream.
  const arrived = alice.locator('#items li', { hasText: 'photo:sunset' });
  await arrived.waitFor({ timeout: 10_000 });
  expect(await arrived.locator('b').textContent()).toBe('bob');
  expect(await shownObjects(alice)).toEqual(['photo:sunset']);

  const screenshot = join(dir, 'console.png');
  await alice.screenshot({ path: screenshot, fullPage: true });
  const png = await readFile(screenshot);
  expect(png.length).toBeGreaterThan(1_000);
  expect(png.subarray(0, 8).equals(PNG_SIGNATURE)).toBe(true);

  // A notification feed shows groups, and its stream's group events change them live.
  const alerts = await consoleTab('alice', 'alerts:alice');
  await alerts.fill('#follow-target', 'user:bob');
  await alerts.click('#follow');
  await alerts.locator('#status', { hasText: 'alerts:alice follows user:bob' }).waitFor();
  await alerts.locator('#items li', { hasText: 'photo:sunset' }).waitFor({ timeout: 10_000 });
  await alerts.locator('#live-state', { hasText: 'streaming' }).waitFor({ timeout: 10_000 });
  for (const actor of ['carol', 'dan']) {
    await bob.fill('#post-actor', actor);
    await bob.fill('#post-verb', 'like');
    await bob.fill('#post-object', 'photo:sunset');
    const before = await bob.textContent('#status');
    await bob.click('#post');
    // One post at a time: two in flight could be taken in either order, and the group names its latest actor first.
    await bob.locator('#status').filter({ hasText: /^posted /, hasNotText: before ?? '' }).waitFor();
  }
  const likes = alerts.locator('#items li', { hasText: 'like' });
  await likes.filter({ hasText: 'dan, carol' }).waitFor({ timeout: 10_000 });
  expect(await likes.locator('.badge').first().textContent()).toBe('2');
  expect(await alerts.textContent('#counts')).toBe('2 unseen · 2 unread');
  await alerts.close();

  // An unfollow takes bob's post out of alice's timeline, and the stream out of the tab.
  await alice.fill('#follow-target', 'user:bob');
  await alice.click('#unfollow');
  await alice.locator('#status', { hasText: 'timeline:alice no longer follows user:bob' }).waitFor();
  await alice.locator('#items li').first().waitFor({ state: 'detached', timeout: 10_000 });

  // Page by page: 33 activities are a first page of 25 and, with "Older", the other 8.
  const api = new FeedmillClient({ baseUrl: deployment.baseUrl, token: await tokenFor(undefined) });
  const time = (i: number) => new Date(Date.UTC(2020, 0, 1, 0, 0, i)).toISOString();
  await api.addActivities(Array.from({ length: 30 }, (_, i) => ({ feed: 'user:bob' as FeedId, actor: 'bob', verb: 'post', object: `n${i}`, time: time(i) })));
  await openFeed(bob, 'user:bob');
  expect(await bob.locator('#items li').count()).toBe(25);
  await bob.click('#older');
  await bob.locator('#items li').nth(32).waitFor();
  expect(await shownObjects(bob)).toEqual([...Array<string>(3).fill('photo:sunset'), ...Array.from({ length: 30 }, (_, i) => `n${29 - i}`)]);
  expect(await bob.isHidden('#older')).toBe(true);

  // The API's refusals are shown with their code: another user's feed, an unknown group.
  await bob.fill('#feed', 'timeline:alice');
  await bob.click('#open');
  await bob.locator('#status.error', { hasText: '403 forbidden' }).waitFor();
  await bob.fill('#feed', 'shop:1');
  await bob.click('#open');
  await bob.locator('#status.error', { hasText: '404 unknown_group' }).waitFor();
});
