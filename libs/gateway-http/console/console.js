// The feedmill console: one page over the public HTTP API, as any client would use it. Plain
// DOM and fetch, no build step and nothing fetched from elsewhere, so it works offline and
// reads in one sitting. Activities are other people's text: it is only ever set as text.

const $ = (id) => document.getElementById(id);
const PAGE_SIZE = 25;
const FEED_PATTERN = /^[A-Za-z0-9_-]{1,128}:[A-Za-z0-9_-]{1,128}$/;

/** What is on screen: the open feed, its entries newest first, where the next page starts, its live stream. */
const view = { feed: undefined, entries: [], next: null, grouped: false, stream: undefined };

class ApiError extends Error {
  constructor(status, body) {
    super(`${status} ${body?.code ?? 'error'}: ${body?.message ?? 'no answer'}`);
    this.status = status;
  }
}

/** A call of the API with the pasted token, its JSON answer, or an ApiError carrying the API's code and message. */
async function api(method, path, body) {
  const headers = {};
  const token = $('token').value.trim();
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await response.text();
  const answer = text ? JSON.parse(text) : undefined;
  if (!response.ok) throw new ApiError(response.status, answer);
  return { status: response.status, answer };
}

const feedPath = (feed) => `/v1/feeds/${feed.split(':').map(encodeURIComponent).join('/')}`;

function say(message, error = false) {
  $('status').textContent = message;
  $('status').classList.toggle('error', error);
}

/** Runs a user's action, saying what went wrong instead of failing quietly. */
const action = (run) => async (event) => {
  event?.preventDefault();
  try {
    await run();
  } catch (error) {
    say(error.message, true);
  }
};

function requireFeed(value, what) {
  const feed = value.trim();
  if (!FEED_PATTERN.test(feed)) throw new Error(`${what}: "${feed}" is not group:id`);
  return feed;
}

async function openFeed(feed) {
  // Read first: a refusal leaves the feed that was open as it was.
  const { answer } = await api('GET', `${feedPath(feed)}?limit=${PAGE_SIZE}`);
  closeStream();
  view.feed = feed;
  history.replaceState(null, '', `#feed=${feed}`);
  remember(feed);
  $('feed').value = feed;
  $('feed-title').textContent = feed;
  $('post-actor').placeholder = feed.split(':')[1];
  view.entries = answer.items;
  view.next = answer.next;
  view.grouped = answer.items.some(isGroup) || 'unseen' in answer;
  showCounts(answer);
  render();
  say(`read ${feed}: ${answer.items.length} ${view.grouped ? 'groups' : 'activities'}`);
  if ($('live').checked) openStream(feed);
}

async function readOlder() {
  const { answer } = await api('GET', `${feedPath(view.feed)}?limit=${PAGE_SIZE}&cursor=${encodeURIComponent(view.next)}`);
  const shown = new Set(view.entries.map((entry) => entry.id));
  view.entries.push(...answer.items.filter((entry) => !shown.has(entry.id)));
  view.next = answer.next;
  render();
}

/**
 * Follows the feed's stream (EventSource reconnects by itself, resuming with Last-Event-ID).
 * Its events change the first page: they are applied to what is shown, and older pages
 * already read stay below it.
 */
function openStream(feed) {
  const token = $('token').value.trim();
  const stream = new EventSource(`${feedPath(feed)}/stream${token ? `?access_token=${encodeURIComponent(token)}` : ''}`);
  view.stream = stream;
  const on = (type, apply) =>
    stream.addEventListener(type, (message) => {
      if (view.stream !== stream) return;
      apply(JSON.parse(message.data));
      render();
    });
  on('reset', (data) => {
    liveState('streaming', true);
    if (data.groups) return applyGroupReset(data);
    const fresh = new Set(data.items.map((activity) => activity.id));
    const last = data.items[data.items.length - 1];
    view.grouped = false;
    // Pages read further down stay, under the new first page.
    view.entries = [...data.items, ...view.entries.filter((entry) => !fresh.has(entry.id) && last && isOlder(entry, last))];
  });
  on('added', ({ activity }) => place(activity, true));
  on('updated', ({ activity }) => place(activity, false));
  on('removed', ({ id }) => (view.entries = view.entries.filter((entry) => entry.id !== id)));
  on('group', (data) => {
    view.entries = view.entries.filter((entry) => entry.id !== (data.removed ?? data.group.id));
    if (data.group) view.entries.splice(data.rank, 0, { ...data.group, fresh: true });
    showCounts(data);
  });
  stream.onerror = () => liveState(stream.readyState === EventSource.CLOSED ? 'stream refused: check the token' : 'reconnecting…', false);
}

function closeStream() {
  view.stream?.close();
  view.stream = undefined;
  liveState('', false);
}

function applyGroupReset(data) {
  view.grouped = true;
  const fresh = new Set(data.groups.map((group) => group.id));
  // Groups read further down (past the first page) stay, under the new first page.
  view.entries = [...data.groups, ...view.entries.slice(PAGE_SIZE).filter((entry) => !fresh.has(entry.id))];
  showCounts(data);
}

/** An activity added or changed: in its place by time, marked fresh for a moment. */
function place(activity, added) {
  const at = view.entries.findIndex((entry) => entry.id === activity.id);
  if (at >= 0 && !added) return void (view.entries[at] = { ...activity, fresh: true });
  if (at >= 0) view.entries.splice(at, 1);
  const below = view.entries.findIndex((entry) => isOlder(entry, activity));
  view.entries.splice(below < 0 ? view.entries.length : below, 0, { ...activity, fresh: true });
}

const isGroup = (entry) => 'activityCount' in entry;
const isOlder = (entry, than) => entry.time < than.time || (entry.time === than.time && entry.id < than.id);

function render() {
  $('items').replaceChildren(...view.entries.map((entry) => (isGroup(entry) ? groupItem(entry) : activityItem(entry))));
  for (const entry of view.entries) delete entry.fresh;
  $('older').hidden = !view.next;
}

function activityItem(activity) {
  return item(activity, [el('b', activity.actor), ` ${activity.verb} `, el('code', activity.object)], `${activity.time} · ${activity.feed}${activity.updatedAt ? ' · edited' : ''}`);
}

function groupItem(group) {
  const others = group.actorCount - group.actors.slice(0, 3).length;
  const actors = group.actors.slice(0, 3).join(', ') + (others > 0 ? ` and ${others} more` : '');
  const parts = [el('b', actors), ` ${group.verb} `, el('code', group.object ?? ''), el('span', `${group.activityCount}`, 'badge')];
  if (group.seen === false) parts.push(el('span', 'unseen', 'badge'));
  return item(group, parts, `${group.updatedAt} · since ${group.time}`);
}

function item(entry, parts, meta) {
  const li = el('li', '', entry.fresh ? 'fresh' : '');
  li.dataset.id = entry.id;
  li.append(...parts, el('div', meta, 'meta'));
  return li;
}

function el(tag, text, className = '') {
  const node = document.createElement(tag);
  node.textContent = text;
  if (className) node.className = className;
  return node;
}

function showCounts(answer) {
  $('counts').textContent = 'unseen' in answer ? `${answer.unseen} unseen · ${answer.unread} unread` : '';
}

function liveState(text, on) {
  $('live-state').textContent = text;
  $('live-state').classList.toggle('on', on);
}

async function post() {
  if (!view.feed) throw new Error('open the feed to post to first');
  const activity = { actor: $('post-actor').value.trim() || view.feed.split(':')[1], verb: $('post-verb').value.trim(), object: $('post-object').value.trim() };
  const { answer } = await api('POST', `${feedPath(view.feed)}/activities`, activity);
  $('post-object').value = '';
  say(`posted ${answer.id} to ${view.feed}`);
}

async function follow(method) {
  if (!view.feed) throw new Error('open the feed that follows first');
  const target = requireFeed($('follow-target').value, 'feed to follow');
  const { status } = await api(method, `${feedPath(view.feed)}/follows/${target.split(':').map(encodeURIComponent).join('/')}`);
  remember(target);
  say(method === 'DELETE' ? `${view.feed} no longer follows ${target}` : status === 202 ? `${target} is private: the follow waits for its owner` : `${view.feed} follows ${target}`);
}

/** Feeds opened or followed here, offered again in the feed fields. */
const recentFeeds = () => JSON.parse(localStorage.getItem('feedmill.recent') ?? '[]');

function remember(feed) {
  localStorage.setItem('feedmill.recent', JSON.stringify([feed, ...recentFeeds().filter((name) => name !== feed)].slice(0, 20)));
  offerRecent();
}

function offerRecent() {
  $('recent-feeds').replaceChildren(...recentFeeds().map((name) => Object.assign(document.createElement('option'), { value: name })));
}

$('token').value = sessionStorage.getItem('feedmill.token') ?? '';
$('token').addEventListener('change', () => sessionStorage.setItem('feedmill.token', $('token').value.trim()));
$('feed-form').addEventListener('submit', action(() => openFeed(requireFeed($('feed').value, 'feed'))));
$('live').addEventListener('change', () => (!$('live').checked ? closeStream() : view.feed && openStream(view.feed)));
$('older').addEventListener('click', action(readOlder));
$('post-form').addEventListener('submit', action(post));
$('follow-form').addEventListener('submit', action(() => follow('PUT')));
$('unfollow').addEventListener('click', action(() => follow('DELETE')));
offerRecent();
const linked = /^#feed=(.+)$/.exec(location.hash)?.[1];
if (linked && FEED_PATTERN.test(linked)) action(() => openFeed(linked))();
