import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { openDeadLetters, deadLetterEvents } from './dead-letters.js';
import { eventCodec, MalformedEventError, UnknownEventVersionError, type StoredEvent } from './event-codec.js';
import { decodeFeedEvents, feedEvents } from './events.js';

/** One stored event of each type as the first version wrote it; never edit it, add a file for a new version. */
const firstVersions = JSON.parse(readFileSync(new URL('./fixtures/events-v1.json', import.meta.url), 'utf8')) as Array<Required<StoredEvent>>;

describe('event codec', () => {
  it('has a stored first version of every event type', () => {
    const types = new Set(firstVersions.map((stored) => stored.type));
    expect([...types].sort()).toEqual([...Object.keys(feedEvents.versions), ...Object.keys(deadLetterEvents.versions)].sort());
  });

  it.each(firstVersions.map((stored) => [stored.type, stored] as const))('decodes the stored first version of %s', (_type, stored) => {
    const codec = feedEvents.knows(stored.type) ? feedEvents : deadLetterEvents;
    const decoded = codec.decode(stored);
    expect(decoded).toEqual({ type: stored.type, data: stored.data });
    // Every type is at its first version today, so encoding writes back what is stored.
    expect(codec.encode(decoded as never)).toEqual({ type: stored.type, data: stored.data, metadata: stored.metadata });
  });

  it('reads events stored without a version as version 1', () => {
    const [followed] = firstVersions.filter((stored) => stored.type === 'FeedFollowed');
    expect(feedEvents.decode({ type: followed!.type, data: followed!.data })).toEqual({ type: 'FeedFollowed', data: followed!.data });
  });

  it('lifts an older version through each upcaster in turn, then checks today’s schema', () => {
    const codec = eventCodec({
      Renamed: {
        schema: z.strictObject({ who: z.string(), when: z.string(), source: z.string() }),
        upcasters: {
          1: (data) => ({ who: (data as { user: string }).user, when: (data as { at: string }).at }),
          2: (data) => ({ ...(data as object), source: 'unknown' }),
        },
      },
    });
    expect(codec.versions).toEqual({ Renamed: 3 });
    expect(codec.decode({ type: 'Renamed', data: { user: 'u', at: 't' }, metadata: { v: 1 } })).toEqual({ type: 'Renamed', data: { who: 'u', when: 't', source: 'unknown' } });
    expect(codec.decode({ type: 'Renamed', data: { who: 'u', when: 't' }, metadata: { v: 2 } })).toEqual({ type: 'Renamed', data: { who: 'u', when: 't', source: 'unknown' } });
    expect(codec.decode({ type: 'Renamed', data: { who: 'u', when: 't', source: 'app' }, metadata: { v: 3 } })?.data.source).toBe('app');
    expect(codec.encode({ type: 'Renamed', data: { who: 'u', when: 't', source: 'app' } }).metadata).toEqual({ v: 3 });
    expect(() => codec.decode({ type: 'Renamed', data: { user: 'u' }, metadata: { v: 1 } })).toThrow(MalformedEventError);
  });

  it('ignores types it does not read and refuses versions newer than it knows', () => {
    expect(feedEvents.decode({ type: 'SomethingNew', data: {} })).toBeUndefined();
    expect(() => feedEvents.decode({ type: 'ActivityAdded', data: {}, metadata: { v: 2 } })).toThrow(UnknownEventVersionError);
  });

  it('reads markings recorded by sort key and those recorded by log position, and refuses one that marks nothing', () => {
    const base = { feed: 'alerts:ann', mark: 'seen', time: 't' };
    expect(feedEvents.decode({ type: 'NotificationsMarked', data: { ...base, all: 'k', groups: [{ id: 'g', upTo: 'k' }] } })?.data).toMatchObject({ all: 'k', groups: [{ id: 'g', upTo: 'k' }] });
    expect(feedEvents.decode({ type: 'NotificationsMarked', data: { ...base, allAt: 7, groups: [{ id: 'g', at: 6 }] } })?.data).toMatchObject({ allAt: 7, groups: [{ id: 'g', at: 6 }] });
    expect(() => feedEvents.decode({ type: 'NotificationsMarked', data: { ...base, groups: [{ id: 'g' }] } })).toThrow(/neither a key nor a position/);
  });

  it('refuses a stored event that does not have its type’s shape or a version that is not one', () => {
    expect(() => feedEvents.decode({ type: 'FeedFollowed', data: { follower: 'timeline:a' } })).toThrow(MalformedEventError);
    expect(() => feedEvents.decode({ type: 'ActivityRemoved', data: { id: 'x', feed: 'not a feed', time: 't' } })).toThrow(/feed/);
    expect(() => feedEvents.decode({ type: 'FeedFollowed', data: { follower: 'timeline:a', target: 'user:b', time: 't' }, metadata: { v: 'one' } })).toThrow(/metadata\.v/);
    expect(() => feedEvents.decode({ type: 'ActivityUpdated', data: { id: 'x', feed: 'user:a', time: 't' } })).toThrow(/changes neither object nor extra/);
  });

  it('takes the data of a trusted event of today’s version as it is, and still lifts and checks an older one', () => {
    const codec = eventCodec({
      Renamed: { schema: z.strictObject({ who: z.string() }), upcasters: { 1: (data) => ({ who: (data as { user: unknown }).user }) } },
    });
    const data = { who: 'u' };
    expect(codec.decode({ type: 'Renamed', data, metadata: { v: 2 }, trusted: true })?.data).toBe(data);
    expect(codec.decode({ type: 'Renamed', data, metadata: { v: 2 } })?.data).not.toBe(data);
    expect(() => codec.decode({ type: 'Renamed', data: { user: 7 }, metadata: { v: 1 }, trusted: true })).toThrow(MalformedEventError);
    expect(() => codec.decode({ type: 'Renamed', data, metadata: { v: 3 }, trusted: true })).toThrow(UnknownEventVersionError);
  });

  it('decodes a batch of the log with positions, leaving out events that are not feed events', () => {
    const records = firstVersions.map((stored, index) => ({ ...stored, position: index + 1 }));
    const decoded = decodeFeedEvents(records);
    expect(decoded.map((e) => [e.position, e.event.type])).toEqual([
      [1, 'ActivityAdded'],
      [2, 'ActivityBumped'],
      [3, 'ActivityRemoved'],
      [4, 'FeedFollowed'],
      [5, 'FeedUnfollowed'],
      [6, 'ActivityAdded'],
      [6, 'ActivityAdded'],
      [7, 'FeedFollowed'],
      [7, 'FeedFollowed'],
      [10, 'FollowRequested'],
      [11, 'FollowRequestRejected'],
      [12, 'FeedSettingsChanged'],
      [13, 'NotificationsMarked'],
      [14, 'ActivityUpdated'],
      [17, 'ActivityHidden'],
      [18, 'ActivityShown'],
      [19, 'FeedErased'],
      [20, 'ContentErased'],
    ]);
  });

  it('reads a batch as the single events it stands for, each as the single endpoint records it', () => {
    const [added] = firstVersions.filter((stored) => stored.type === 'ActivitiesAdded');
    const [followed] = firstVersions.filter((stored) => stored.type === 'FeedsFollowed');
    const items = decodeFeedEvents([
      { ...added!, position: 9 },
      { ...followed!, position: 10 },
    ]);
    expect(items).toEqual([
      { position: 9, event: { type: 'ActivityAdded', data: { activity: (added!.data as { activities: unknown[] }).activities[0] } } },
      { position: 9, event: { type: 'ActivityAdded', data: { activity: (added!.data as { activities: unknown[] }).activities[1] } } },
      { position: 10, event: { type: 'FeedFollowed', data: { follower: 'timeline:bob', target: 'user:carol', time: '2026-01-05T09:00:00.000Z' } } },
      { position: 10, event: { type: 'FeedFollowed', data: { follower: 'timeline:dan', target: 'user:alice', time: '2026-01-05T09:00:00.000Z' } } },
    ]);
    for (const { event } of items) expect(feedEvents.decode(feedEvents.encode(event))).toEqual(event);
  });

  it('refuses an empty batch or an edge that is not a pair of feeds', () => {
    expect(() => feedEvents.decode({ type: 'FeedsFollowed', data: { id: 'b', time: 't', follows: [] } })).toThrow(MalformedEventError);
    expect(() => feedEvents.decode({ type: 'FeedsFollowed', data: { id: 'b', time: 't', follows: [['timeline:a']] } })).toThrow(MalformedEventError);
    expect(() => feedEvents.decode({ type: 'FeedsFollowed', data: { id: 'b', time: 't', follows: [['timeline:a', 'nobody']] } })).toThrow(/follows\.0: must be a \[follower, target\] pair/);
    expect(() => feedEvents.decode({ type: 'ActivitiesAdded', data: { id: 'b', activities: [] } })).toThrow(MalformedEventError);
  });

  it('reads the dead letters still open from the dead-letter events', () => {
    const letters = firstVersions.filter((stored) => deadLetterEvents.knows(stored.type));
    expect(openDeadLetters(letters.slice(0, 1)).map((letter) => letter.position)).toEqual([42]);
    expect(openDeadLetters(letters)).toEqual([]);
  });

  it('keeps one reader’s dead letter apart from its event’s: each is open until its own replay', () => {
    const [eventLetter, , readerLetter, readerReplayed] = firstVersions.filter((stored) => deadLetterEvents.knows(stored.type));
    const atBob = { ...eventLetter!, data: { ...(eventLetter!.data as object), position: 43 } };
    const replayedForAll = { type: 'DeadLetterReplayed', metadata: { v: 1 }, data: { position: 43, time: '2026-01-01T12:00:00.000Z' } };
    const open = (events: StoredEvent[]) => openDeadLetters(events).map((letter) => `${letter.position} ${letter.reader ?? 'all'}`);
    expect(open([readerLetter!, atBob])).toEqual(['43 all', '43 timeline:bob']);
    expect(open([readerLetter!, atBob, replayedForAll])).toEqual(['43 timeline:bob']);
    expect(open([readerLetter!, atBob, readerReplayed!])).toEqual(['43 all']);
    expect(openDeadLetters([readerLetter!])).toEqual([readerLetter!.data]);
  });
});
