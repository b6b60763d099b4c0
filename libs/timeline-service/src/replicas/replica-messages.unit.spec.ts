import type { Activity, DeliverRequest, FeedId } from '@feedmill/contracts';
import { fromCopied, ReaderLists, toCopied } from './replica-messages.js';

const activity = (feed: string, n: number): Activity => ({ id: `${feed}-${n}`, feed: feed as FeedId, actor: 'a', verb: 'post', object: `note:${n}`, time: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString() });
const followers = (...ids: string[]) => Object.freeze(ids.map((id) => `timeline:${id}` as FeedId));

/** Sends requests as a worker's channel does: encoded for the copy, structured-cloned, decoded. */
function channel(limit?: number) {
  const sent = new ReaderLists(limit);
  const received = new ReaderLists(limit);
  return {
    carry: (request: DeliverRequest) => {
      const copied = structuredClone(toCopied(request, sent));
      return { copied, arrived: fromCopied(copied, received) };
    },
    sent,
    received,
  };
}

it('sends a feed’s frozen list of followers once, then names it, and the copy gets the same list object each time', () => {
  const { carry } = channel();
  const list = followers('r1', 'r2', 'r3');
  const first = carry({ after: 0, position: 1, deliveries: [{ kind: 'insert', readers: list, activity: activity('user:a', 1) }] });
  const second = carry({ after: 1, position: 2, deliveries: [{ kind: 'insert', readers: list, activity: activity('user:a', 2) }, { kind: 'remove', readers: ['timeline:r1' as FeedId], id: 'user:a-1' }] });

  expect(first.copied.deliveries[0]).toMatchObject({ keep: 'user:a timeline:r1', readers: list });
  expect(second.copied.deliveries[0]).toEqual({ kind: 'insert', readersOf: 'user:a timeline:r1', activity: activity('user:a', 2) });
  expect(second.copied.deliveries[0]).not.toHaveProperty('readers');
  expect(second.arrived.deliveries[0]).toEqual({ kind: 'insert', readers: list, activity: activity('user:a', 2) });
  // The same list object on the copy's side, frozen, as fan-out's was.
  expect((second.arrived.deliveries[0] as { readers: unknown }).readers).toBe((first.arrived.deliveries[0] as { readers: unknown }).readers);
  expect(Object.isFrozen((first.arrived.deliveries[0] as { readers: unknown }).readers)).toBe(true);
  expect(second.arrived.deliveries[1]).toEqual({ kind: 'remove', readers: ['timeline:r1'], id: 'user:a-1' });
  expect(first.arrived).toEqual({ after: 0, position: 1, deliveries: [{ kind: 'insert', readers: list, activity: activity('user:a', 1) }] });
});

it('sends a list whole again once the feed’s followers changed, and always a list that is not frozen', () => {
  const { carry } = channel();
  carry({ after: 0, position: 1, deliveries: [{ kind: 'insert', readers: followers('r1'), activity: activity('user:a', 1) }] });
  const changed = followers('r1', 'r2');
  const loose = ['timeline:r9' as FeedId];
  const { copied, arrived } = carry({
    after: 1,
    position: 2,
    deliveries: [
      { kind: 'insert', readers: changed, activity: activity('user:a', 2) },
      { kind: 'insert', readers: changed, activity: activity('user:a', 3) },
      { kind: 'insert', readers: loose, activity: activity('user:a', 4) },
    ],
  });
  expect(copied.deliveries.map((d) => ('keep' in d ? 'keep' : 'readersOf' in d ? 'named' : 'whole'))).toEqual(['keep', 'named', 'whole']);
  expect(arrived.deliveries.map((d) => (d as { readers: readonly string[] }).readers)).toEqual([changed, changed, loose]);
});

it('keeps each slice of a feed’s followers apart, as fan-out hands a large feed’s followers in slices', () => {
  const { carry } = channel();
  const [first, second] = [followers('r1', 'r2'), followers('r3', 'r4')];
  const slices = (n: number) => ({ after: n, position: n + 1, deliveries: [first, second].map((readers) => ({ kind: 'insert' as const, readers, activity: activity('user:big', n) })) });
  carry(slices(0));
  const { copied, arrived } = carry(slices(1));
  expect(copied.deliveries.map((d) => ('readersOf' in d ? d.readersOf : undefined))).toEqual(['user:big timeline:r1', 'user:big timeline:r3']);
  expect(arrived.deliveries.map((d) => (d as { readers: readonly string[] }).readers)).toEqual([first, second]);
});

it('keeps as many lists at each end, dropping the least recently used alike, and sends a list dropped whole again', () => {
  const { carry, sent, received } = channel(2);
  const lists = { a: followers('a1'), b: followers('b1'), c: followers('c1') };
  const post = (n: number, feed: 'a' | 'b' | 'c') => carry({ after: n, position: n + 1, deliveries: [{ kind: 'insert', readers: lists[feed], activity: activity(`user:${feed}`, n) }] });
  const how = (n: number, feed: 'a' | 'b' | 'c') => {
    const delivery = post(n, feed).copied.deliveries[0]!;
    return 'keep' in delivery ? 'keep' : 'readersOf' in delivery ? 'named' : 'whole';
  };
  // a, b kept; a used again (b is now the least recent); c drops b; a named; b sent again drops c; c drops a; a drops b.
  expect([how(0, 'a'), how(1, 'b'), how(2, 'a'), how(3, 'c'), how(4, 'a'), how(5, 'b'), how(6, 'c'), how(7, 'a'), how(8, 'c')]).toEqual(['keep', 'keep', 'named', 'keep', 'named', 'keep', 'keep', 'keep', 'named']);
  expect([sent.size, received.size]).toEqual([2, 2]);
});

it('refuses a delivery that names a list the copy never received', () => {
  expect(() => fromCopied({ after: 0, position: 1, deliveries: [{ kind: 'insert', readersOf: 'user:a timeline:r1', activity: activity('user:a', 1) }] }, new ReaderLists())).toThrow(/list of readers that never came \(user:a timeline:r1\)/);
});
