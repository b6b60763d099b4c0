import { randomUUID } from 'node:crypto';
import { subjects, type Activity, type ActivityPage } from '@feedmill/contracts';
import { startNatsServer, type NatsServerHandle } from '@feedmill/harness';
import { DrainingNatsServer } from './draining-nats.server.js';
import { NatsRequests } from './nats-requests.js';
import { RemoteServiceClient } from './service-client.js';

/**
 * Timeline pages over NATS, on a real nats-server: the gateway's client asks for the page
 * written by the timeline process and frames it as it is; a timeline process from before that
 * subject (a rolling deploy) is asked for objects instead, without asking it the new subject
 * again on every read.
 */
let nats: NatsServerHandle;
let client: RemoteServiceClient;
/** The subjects the client sent requests on, in order. */
const sent: string[] = [];
beforeAll(async () => (nats = await startNatsServer()));
afterAll(() => nats?.stop());
// A client per test: one remembers for 30 s that no timeline answered written pages.
beforeEach(() => {
  sent.length = 0;
  const requests = new NatsRequests([nats.url]);
  const send = requests.send.bind(requests);
  requests.send = (subject, payload, timeoutMs) => {
    sent.push(subject);
    return send(subject, payload, timeoutMs);
  };
  client = new RemoteServiceClient(requests);
});
afterEach(() => client.close());

const activity = (n: number): Activity => ({ id: randomUUID(), feed: 'user:bob' as Activity['feed'], actor: 'bob', verb: 'post', object: `post ${n}`, time: new Date(Date.UTC(2026, 0, 1, 0, n)).toISOString() });
const request = { feed: 'timeline:alice' as Activity['feed'], limit: 20 };

/** A timeline process answering `answers`, each subject's calls counted. */
async function timeline(answers: Record<string, () => unknown>): Promise<{ calls: Map<string, number>; stop: () => Promise<void> }> {
  const calls = new Map<string, number>();
  const server = new DrainingNatsServer({ servers: [nats.url], queue: 'timeline', graceMs: 500 });
  for (const [subject, answer] of Object.entries(answers)) {
    server.addHandler(subject, async () => {
      calls.set(subject, (calls.get(subject) ?? 0) + 1);
      return answer();
    });
  }
  await new Promise<void>((resolve, reject) => void server.listen((error?: unknown) => (error ? reject(error as Error) : resolve())));
  return { calls, stop: () => server.close() };
}

it('frames the page a timeline process wrote, as it wrote it, without asking for objects', async () => {
  const items = [activity(2), activity(1)];
  // Written with a space after each comma, which writing the objects here would not give.
  const itemsJson = items.map((item) => JSON.stringify(item)).join(', ');
  const current = await timeline({
    [subjects.timeline.readWritten]: () => ({ itemsJson, next: null, newest: null }),
    [subjects.timeline.read]: () => ({ items, next: null, newest: null }),
  });
  try {
    const page = await client.requestPage(subjects.timeline.read, request);
    expect(page).toEqual({ itemsJson, next: null, newest: null });
    expect(JSON.parse(`[${page.itemsJson}]`)).toEqual(items);
    expect(Object.fromEntries(current.calls)).toEqual({ [subjects.timeline.readWritten]: 1 });
    expect(sent).toEqual([subjects.timeline.readWritten]);
  } finally {
    await current.stop();
  }
});

it('asks a timeline process from before written pages for objects, writes them itself, and does not ask it for written pages on the next read', async () => {
  const items: ActivityPage['items'] = [activity(4), activity(3)];
  const older = await timeline({ [subjects.timeline.read]: () => ({ items, next: null, newest: null }) });
  try {
    const first = await client.requestPage(subjects.timeline.read, request);
    const second = await client.requestPage(subjects.timeline.read, request);
    for (const page of [first, second]) expect(JSON.parse(`[${page.itemsJson}]`)).toEqual(items);
    expect(Object.fromEntries(older.calls)).toEqual({ [subjects.timeline.read]: 2 });
    // Nobody answered the new subject once; the second read did not ask it again.
    expect(sent).toEqual([subjects.timeline.readWritten, subjects.timeline.read, subjects.timeline.read]);
  } finally {
    await older.stop();
  }
});
