import type { FeedEvent, FeedId, PositionedEvent } from '@feedmill/contracts';
import { FollowerIndex } from '@feedmill/feed-models';
import { seededRandom } from '@feedmill/feed-models/testing';
import { SnapshotCorruptError, SnapshotMismatchError } from '@feedmill/stores';
import { FollowerIndexSnapshots } from './follower-index-snapshot.js';

const producers = Array.from({ length: 15 }, (_, i): FeedId => `user:u${i}`);
const followers = [...Array.from({ length: 40 }, (_, i): FeedId => `timeline:t${i}`), ...Array.from({ length: 5 }, (_, i): FeedId => `user:f${i}`)];
const keeps = (follower: FeedId) => follower.startsWith('timeline:');
const time = '2026-01-01T00:00:00.000Z';

/** Follows, unfollows and posts, several at one position now and then (an import). */
function generateEvents(count: number, seed: number): PositionedEvent[] {
  const next = seededRandom(seed);
  const pick = <T>(items: readonly T[]) => items[Math.floor(next() * items.length)]!;
  const events: PositionedEvent[] = [];
  for (let position = 1; events.length < count; position++) {
    for (let item = 0, items = next() < 0.1 ? 5 : 1; item < items; item++) {
      const roll = next();
      const follow = { follower: pick(followers), target: pick(producers), time };
      // Some follows are bounded (a copy limit), some unfollows keep the history.
      const event: FeedEvent =
        roll < 0.55
          ? { type: 'FeedFollowed', data: next() < 0.3 ? { ...follow, since: `${time}|a${position}` } : follow }
          : roll < 0.75
            ? { type: 'FeedUnfollowed', data: next() < 0.4 ? { ...follow, keepHistory: true } : follow }
            : { type: 'ActivityAdded', data: { activity: { id: `a${position}`, feed: pick(producers), actor: 'a', verb: 'post', object: 'o', time } } };
      events.push({ position, event });
    }
  }
  return events;
}

function view(index: FollowerIndex) {
  return [
    index.position,
    index.edges,
    ...producers.flatMap((target) => [target, index.followersOf(target), index.hasHadActivities(target), [...(index.boundsOf(target) ?? [])].sort()]),
    ...followers.map((f) => producers.map((t) => index.follows(f, t))),
  ];
}

function snapshotsOf(holder: { index: FollowerIndex }, groups = 'groups A') {
  return new FollowerIndexSnapshots(
    () => holder.index,
    (index) => (holder.index = index),
    groups,
  );
}

describe("fan-out's follower index: a snapshot and the tail", () => {
  const events = generateEvents(2_000, 5);
  const head = events[events.length - 1]!.position;

  it.each([0, 1, 700, head - 1, head])('reach the index a full read reaches, and take in more as it does (snapshot at position %i)', (cut) => {
    const full = new FollowerIndex(keeps);
    full.advance(events, head);
    const before = { index: new FollowerIndex(keeps) };
    before.index.advance(events, cut);
    const snapshot = snapshotsOf(before).takeSnapshot();
    expect(snapshot.position).toBe(cut);
    const restored = { index: new FollowerIndex(keeps) };
    snapshotsOf(restored).restoreSnapshot({ position: snapshot.position, payload: Uint8Array.from(snapshot.payload) });
    expect(restored.index.position).toBe(cut);
    restored.index.advance(events, head);
    expect(view(restored.index)).toEqual(view(full));
    // A restored index goes on changing as the full one does, its runs grown from no spare room.
    const more = generateEvents(300, 6).map(({ position, event }) => ({ position: head + position, event }));
    full.advance(more, head + 1_000);
    restored.index.advance(more, head + 1_000);
    expect(view(restored.index)).toEqual(view(full));
  });

  it('refuses a snapshot taken under another feed config, leaving the index as it was', () => {
    const before = { index: new FollowerIndex(keeps) };
    before.index.advance(events, 500);
    const other = { index: new FollowerIndex(keeps) };
    expect(() => snapshotsOf(other, 'groups B').restoreSnapshot(snapshotsOf(before).takeSnapshot())).toThrow(SnapshotMismatchError);
    expect(other.index.position).toBe(0);
  });

  it('refuses a snapshot that does not hold together', () => {
    const before = { index: new FollowerIndex(keeps) };
    before.index.advance(events, 500);
    const payload = Uint8Array.from(snapshotsOf(before).takeSnapshot().payload);
    // The last section is the members: make its last member a follower number that does not exist.
    new DataView(payload.buffer).setInt32(payload.length - 8, 1_000_000, true);
    const other = { index: new FollowerIndex(keeps) };
    expect(() => snapshotsOf(other).restoreSnapshot({ position: 500, payload })).toThrow(SnapshotCorruptError);
    expect(other.index.position).toBe(0);
  });
});
