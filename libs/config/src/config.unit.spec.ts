import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { feedConfigSchema, type FeedId } from '@feedmill/contracts';
import { loadFeedConfig } from './feed-config-file.js';
import { FeedGroups } from './feed-groups.js';
import { loadRuntimeConfig } from './runtime-config.js';

describe('configuration', () => {
  it('fills defaults and names the variable that is wrong', () => {
    expect(loadRuntimeConfig({}).PORT).toBe(3000);
    expect(() => loadRuntimeConfig({ PORT: 'eighty' })).toThrow(/PORT/);
    expect(() => loadRuntimeConfig({ LOG: 'mongo' })).toThrow(/LOG/);
    expect(() => loadRuntimeConfig({ LOG: 'kurrentdb' })).toThrow(/KURRENTDB_URL/);
    expect(() => loadRuntimeConfig({ STORE: 'mongodb' })).toThrow(/MONGODB_URL/);
    expect(loadRuntimeConfig({}).STORE).toBe('memory');
    expect(loadRuntimeConfig({}).RATE_LIMIT_PER_MINUTE).toBe(0);
    expect(loadRuntimeConfig({ RATE_LIMIT_PER_MINUTE: '600' }).RATE_LIMIT_PER_MINUTE).toBe(600);
    expect(() => loadRuntimeConfig({ RATE_LIMIT_PER_MINUTE: '-1' })).toThrow(/RATE_LIMIT_PER_MINUTE/);
    expect(() => loadRuntimeConfig({ RATE_LIMIT_PER_MINUTE: 'lots' })).toThrow(/RATE_LIMIT_PER_MINUTE/);
    expect(loadRuntimeConfig({ LOG: 'kurrentdb', KURRENTDB_URL: 'kurrentdb://127.0.0.1:2113?tls=false' }).LOG).toBe('kurrentdb');
    expect(loadRuntimeConfig({}).KURRENTDB_NAMESPACE).toBe('');
    expect(loadRuntimeConfig({ KURRENTDB_NAMESPACE: 'tenant-7-' }).KURRENTDB_NAMESPACE).toBe('tenant-7-');
    expect(() => loadRuntimeConfig({ KURRENTDB_NAMESPACE: 'a/b' })).toThrow(/KURRENTDB_NAMESPACE/);
  });

  it('opens a service status port only when given one, gives held requests a grace period at shutdown, and replicates the stream as told', () => {
    expect(loadRuntimeConfig({}).STATUS_PORT).toBeUndefined();
    expect(loadRuntimeConfig({ STATUS_PORT: '8081' }).STATUS_PORT).toBe(8081);
    expect(() => loadRuntimeConfig({ STATUS_PORT: '0' })).toThrow(/STATUS_PORT/);
    expect(() => loadRuntimeConfig({ STATUS_PORT: 'status' })).toThrow(/STATUS_PORT/);
    expect(loadRuntimeConfig({}).SHUTDOWN_GRACE_MS).toBe(2000);
    expect(loadRuntimeConfig({}).JETSTREAM_REPLICAS).toBe(1);
    expect(() => loadRuntimeConfig({ JETSTREAM_REPLICAS: '6' })).toThrow(/JETSTREAM_REPLICAS/);
    expect(() => loadRuntimeConfig({ SHUTDOWN_GRACE_MS: '-1' })).toThrow(/SHUTDOWN_GRACE_MS/);
  });

  it('takes timeline partitions and replicas, and refuses a replica index outside them', () => {
    expect(loadRuntimeConfig({})).toMatchObject({ TIMELINE_PARTITIONS: 1, TIMELINE_REPLICAS: 1, TIMELINE_PARTITION_LEASE_MS: 3000 });
    expect(loadRuntimeConfig({}).TIMELINE_REPLICA_INDEX).toBeUndefined();
    expect(loadRuntimeConfig({ TIMELINE_PARTITIONS: '4', TIMELINE_REPLICAS: '2', TIMELINE_REPLICA_INDEX: '1' })).toMatchObject({ TIMELINE_PARTITIONS: 4, TIMELINE_REPLICAS: 2, TIMELINE_REPLICA_INDEX: 1 });
    expect(() => loadRuntimeConfig({ TIMELINE_PARTITIONS: '0' })).toThrow(/TIMELINE_PARTITIONS/);
    expect(() => loadRuntimeConfig({ TIMELINE_PARTITIONS: '1025' })).toThrow(/TIMELINE_PARTITIONS/);
    expect(() => loadRuntimeConfig({ TIMELINE_PARTITIONS: '4', TIMELINE_REPLICAS: '2', TIMELINE_REPLICA_INDEX: '2' })).toThrow(/TIMELINE_REPLICA_INDEX: .*below TIMELINE_REPLICAS/);
    expect(() => loadRuntimeConfig({ TIMELINE_PARTITIONS: '2', TIMELINE_REPLICAS: '3', TIMELINE_REPLICA_INDEX: '2' })).toThrow(/TIMELINE_REPLICA_INDEX: .*owns no partition/);
  });

  it('names the file and the key of a bad feed config', () => {
    const dir = mkdtempSync(join(tmpdir(), 'feedmill-config-'));
    const path = join(dir, 'feeds.json');
    writeFileSync(path, JSON.stringify({ groups: { timeline: { kind: 'timeline', cap: -1 } } }));
    expect(() => loadFeedConfig(path)).toThrow(new RegExp(`${path}.*groups\\.timeline\\.cap`));
    writeFileSync(path, '{ not json');
    expect(() => loadFeedConfig(path)).toThrow(/cannot read it as JSON/);
    expect(loadFeedConfig(undefined).groups['user']).toEqual({ kind: 'producer' });
  });

  it('tells a feed’s group by its whole name, even where one group’s name starts another’s', () => {
    const config = feedConfigSchema.parse({
      groups: {
        time: { kind: 'producer' },
        timeline: { kind: 'timeline', model: 'ring', cap: 50 },
        hot: { kind: 'timeline', model: 'cache', cap: 20, relevancy: true, inactivityMinutes: 2 },
        cold: { kind: 'timeline', model: 'pull', cap: 10 },
      },
    });
    const groups = new FeedGroups(config);
    const groupOf = (feed: string) => config.groups[feed.slice(0, feed.indexOf(':'))];
    const expected = (feed: string) => {
      const group = groupOf(feed);
      if (group?.kind !== 'timeline') return { model: 'pull', cap: 0, inactivityMs: 0 };
      const { model, cap, inactivityMinutes, bucketMinutes, bucketSize, embed, relevancy } = group;
      return { model, cap, inactivityMs: inactivityMinutes * 60_000, bucketMs: bucketMinutes * 60_000, bucketSize, embed, relevancy };
    };
    for (const feed of ['time:x', 'timeline:x', 'timelines:x', 'timeline:time', 'hot:a', 'ho:t', 'cold:c', 'nogroup:z', 'time:line'] as FeedId[]) {
      expect({ feed, policy: groups.timelinePolicyOf(feed) }).toEqual({ feed, policy: expected(feed) });
      expect({ feed, timeline: groups.isTimeline(feed) }).toEqual({ feed, timeline: groupOf(feed)?.kind === 'timeline' });
      expect({ feed, kind: groups.kindOfFeed(feed) }).toEqual({ feed, kind: groupOf(feed)?.kind });
    }
    expect(groups.timelinePolicyOf('timeline:a')).toBe(groups.timelinePolicyOf('timeline:b'));
  });

  it('knows no group by a name every object inherits (constructor, toString, __proto__)', () => {
    const groups = new FeedGroups(feedConfigSchema.parse({ groups: { user: { kind: 'producer' }, notes: { kind: 'timeline', model: 'ring', notifications: true, acceptsTargets: true } } }));
    for (const group of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) {
      expect(() => groups.kindOf(group)).toThrow(expect.objectContaining({ code: 'unknown_group', field: 'group' }));
      const feed = `${group}:bob` as FeedId;
      expect([groups.kindOfFeed(feed), groups.isTimeline(feed), groups.acceptsTargets(feed), groups.isNotificationFeed(feed), groups.aggregateRuleOf(feed)]).toEqual([undefined, false, false, false, undefined]);
    }
    expect(groups.kindOf('notes')).toBe('timeline');
    expect(groups.acceptsTargets('notes:bob' as FeedId)).toBe(true);
  });
});
