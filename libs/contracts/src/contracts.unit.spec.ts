import { decodeCursor, encodeCursor, justAbove, sortKeyOf } from './sort-key.js';
import { activityChangesSchema, newActivitySchema } from './activity.js';
import { deliverRequestSchema } from './messages.js';
import { subjects, wire } from './wire.js';
import { feedConfigSchema } from './feed-config.js';
import { feedPairsSchema, isFeedId } from './feeds.js';
import { FeedmillError } from './errors.js';

describe('sort keys and cursors', () => {
  it('order by time, then by id', () => {
    const a = sortKeyOf({ time: '2026-01-01T00:00:00.000Z', id: 'b' });
    const b = sortKeyOf({ time: '2026-01-01T00:00:00.000Z', id: 'c' });
    const c = sortKeyOf({ time: '2026-01-01T00:00:00.001Z', id: 'a' });
    expect([c, a, b].sort()).toEqual([a, b, c]);
    expect([b, justAbove(a), a].sort()).toEqual([a, justAbove(a), b]);
  });

  it('round-trips a cursor and refuses one it did not issue', () => {
    const key = sortKeyOf({ time: '2026-01-01T00:00:00.000Z', id: 'x-1' });
    expect(decodeCursor(encodeCursor(key))).toBe(key);
    expect(() => decodeCursor(Buffer.from('hello').toString('base64url'))).toThrow(FeedmillError);
    expect(() => decodeCursor('%%%')).toThrow(expect.objectContaining({ code: 'invalid_cursor', field: 'cursor' }));
  });
});

describe('new activities', () => {
  it('normalizes a time with an offset to UTC milliseconds', () => {
    const parsed = newActivitySchema.parse({ actor: 'a', verb: 'v', object: 'o', time: '2026-03-01T12:00:00+02:00' });
    expect(parsed.time).toBe('2026-03-01T10:00:00.000Z');
  });

  it('refuses unknown fields, empty strings and times outside 1970 to 9999', () => {
    const refused = (body: unknown) => newActivitySchema.safeParse(body).error?.issues.map((i) => [i.code, i.path.join('.') || (i as { keys?: string[] }).keys?.join(',')]);
    expect(refused({ actor: 'a', verb: 'v', object: 'o', mood: 1 })).toEqual([['unrecognized_keys', 'mood']]);
    expect(refused({ actor: '', verb: 'v', object: 'o' })).toEqual([['too_small', 'actor']]);
    expect(refused({ actor: 'a', verb: 'v', object: 'o', time: '1960-01-01T00:00:00Z' })).toEqual([['custom', 'time']]);
  });
});

describe('changes to an activity', () => {
  it('take a new object, a new extra or both, and nothing else', () => {
    expect(activityChangesSchema.parse({ object: 'o2' })).toEqual({ object: 'o2' });
    expect(activityChangesSchema.parse({ extra: {} })).toEqual({ extra: {} });
    const refused = (body: unknown) => activityChangesSchema.safeParse(body).error?.issues.map((i) => [i.code, i.path.join('.') || (i as { keys?: string[] }).keys?.join(',')]);
    expect(refused({})).toEqual([['custom', undefined]]);
    expect(refused({ object: '' })).toEqual([['too_small', 'object']]);
    expect(refused({ object: 'o', verb: 'like' })).toEqual([['unrecognized_keys', 'verb']]);
    expect(refused({ extra: 'text' })).toEqual([['invalid_type', 'extra']]);
  });
});

describe('feed ids', () => {
  it('are group:id with plain characters', () => {
    expect(isFeedId('user:bob')).toBe(true);
    expect(isFeedId('user:b:ob')).toBe(false);
    expect(isFeedId('User:bob')).toBe(false);
    expect(isFeedId(`user:${'x'.repeat(129)}`)).toBe(false);
    for (const bad of [':bob', 'user:', 'user:bob\n', ' user:bob', `${'g'.repeat(33)}:bob`]) expect({ bad, ok: isFeedId(bad) }).toEqual({ bad, ok: false });
  });

  it('come in [follower, target] pairs, checked in place, the first bad one named by its index', () => {
    const pairs = [['timeline:a', 'user:b'], ['timeline:c', 'user:d']];
    expect(feedPairsSchema().parse(pairs)).toBe(pairs);
    const issues = (value: unknown, bounds?: { min?: number; max?: number }) => feedPairsSchema(bounds).safeParse(value).error?.issues.map((i) => [i.path.join('.'), i.message]);
    expect(issues([['timeline:a', 'user:b'], ['timeline:a', 'user b'], ['x']])).toEqual([['1', 'must be a [follower, target] pair of feeds ("group:id")']]);
    expect(issues([['timeline:a', 'user:b', 'user:c']])).toEqual([['0', 'must be a [follower, target] pair of feeds ("group:id")']]);
    expect(issues({ 0: ['timeline:a', 'user:b'] })).toEqual([['', 'must be an array of [follower, target] pairs']]);
    expect(issues([], { min: 1 })).toEqual([['', 'must hold at least 1 pairs']]);
    expect(issues(pairs, { max: 1 })).toEqual([['', 'must hold at most 1 pairs']]);
  });
});

describe('deliveries', () => {
  it('accept each kind and refuse an unknown one', () => {
    const activity = { id: 'a', feed: 'user:x', actor: 'x', verb: 'v', object: 'o', time: '2026-01-01T00:00:00.000Z' };
    const ok = deliverRequestSchema.safeParse({
      after: 0,
      position: 3,
      deliveries: [
        { kind: 'insert', readers: ['timeline:r'], activity },
        { kind: 'remove', readers: ['timeline:r'], id: 'a' },
        { kind: 'follow', reader: 'timeline:r', target: 'user:x', recent: [activity], exhausted: true },
        { kind: 'unfollow', reader: 'timeline:r', target: 'user:x' },
      ],
    });
    expect(ok.error).toBeUndefined();
    expect(deliverRequestSchema.safeParse({ after: 0, position: 1, deliveries: [{ kind: 'explode' }] }).error?.issues.map((i) => i.path.join('.'))).toEqual(['deliveries.0.kind']);
  });
});

describe('feed config', () => {
  it('defaults the cap and refuses an unknown kind or key', () => {
    expect(feedConfigSchema.parse({ groups: { t: { kind: 'timeline' } } }).groups['t']).toEqual({ kind: 'timeline', model: 'cache', cap: 800, inactivityMinutes: 240, bucketMinutes: 1440, bucketSize: 100, embed: true, relevancy: false, readsPerPost: 1, rateWindowMinutes: 60, hysteresis: 2, acceptsTargets: false, notifications: false });
    const refusedAt = (config: unknown) => feedConfigSchema.safeParse(config).error?.issues.map((i) => i.path.join('.'));
    expect(refusedAt({ groups: { t: { kind: 'timeline', model: 'rivers' } } })).toEqual(['groups.t.model']);
    expect(refusedAt({ groups: { t: { kind: 'river' } } })).toEqual(['groups.t.kind']);
    expect(refusedAt({ groups: { t: { kind: 'producer', cap: 3 } } })).toEqual(['groups.t']);
    expect(refusedAt({ groups: {} })).toEqual(['groups']);
  });

  it('takes caps up to 100,000, and up to 10,000 for the models that may keep a reader in one document', () => {
    const refused = (group: Record<string, unknown>) => feedConfigSchema.safeParse({ groups: { t: { kind: 'timeline', ...group } } }).error?.issues.map((i) => [i.path.join('.'), i.message]);
    expect(refused({ model: 'ring', cap: 100_000 })).toBeUndefined();
    expect(refused({ model: 'size-buckets', cap: 100_000 })).toBeUndefined();
    expect(refused({ model: 'cache', cap: 10_000 })).toBeUndefined();
    expect(refused({ model: 'ring', cap: 100_001 })).toEqual([['groups.t.cap', expect.stringContaining('100000')]]);
    expect(refused({ model: 'cache', cap: 10_001 })).toEqual([['groups.t.cap', expect.stringContaining('at most 10000')]]);
    expect(refused({ model: 'time-buckets', cap: 20_000 })).toEqual([['groups.t.cap', expect.stringContaining('use ring or size-buckets')]]);
  });
});

describe('errors', () => {
  it('come back from a body with a known code, and not from one with an unknown code', () => {
    expect(FeedmillError.fromBody({ code: 'not_ready', message: 'catching up', field: 'x' })).toEqual(expect.objectContaining({ code: 'not_ready', message: 'catching up', field: 'x' }));
    expect(FeedmillError.fromBody({ code: 'teapot', message: 'short and stout' })).toBeUndefined();
    expect(FeedmillError.fromBody({ code: 'toString', message: 'inherited, not a code' })).toBeUndefined();
    expect(FeedmillError.fromBody({ code: 'internal' })).toBeUndefined();
  });
});

describe('the wire', () => {
  const activity = { id: 'a', feed: 'user:x', actor: 'x', verb: 'v', object: 'o', time: '2026-01-01T00:00:00.000Z' };

  it('has one exchange for every subject, and none for a subject without a name', () => {
    const named = Object.values(subjects).flatMap((group) => Object.values(group));
    expect(Object.keys(wire).sort()).toEqual([...named].sort());
  });

  it('checks a large page by its envelope and its items’ required fields, and passes what the full schema passes', () => {
    const { reply, replyCheck } = wire[subjects.timeline.read];
    const page = { items: [activity, { ...activity, id: 'b', extra: { n: 1 }, bumpedAt: '2026-01-02T00:00:00.000Z' }], next: '2026-01-01T00:00:00.000Z|b' };
    expect(reply.safeParse(page).success).toBe(true);
    expect(replyCheck.safeParse(page).success).toBe(true);
    const refusedAt = (value: unknown) => replyCheck.safeParse(value).error?.issues.map((i) => i.path.join('.'));
    expect(refusedAt({ items: [activity, { ...activity, verb: undefined }], next: null })).toEqual(['items.1.verb']);
    expect(refusedAt({ items: [activity] })).toEqual(['next']);
    expect(refusedAt([activity])).toEqual(['']);
  });

  it('checks an edge page’s feeds as strings', () => {
    const { replyCheck } = wire[subjects.graph.followers];
    expect(replyCheck.safeParse({ items: ['timeline:a'], next: null }).success).toBe(true);
    expect(replyCheck.safeParse({ items: [{ feed: 'timeline:a' }], next: null }).error?.issues.map((i) => i.path.join('.'))).toEqual(['items.0']);
  });
});
