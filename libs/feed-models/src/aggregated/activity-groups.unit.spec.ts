import { sortKeyOf, type Activity, type AggregateRule } from '@feedmill/contracts';
import { activityAt, seededRandom } from '../testing.js';
import { GROUP_SAMPLE_SIZE, groupActivities, pageOfGroups, type ActivityGroup, type GroupCursor } from './activity-groups.js';

const byVerbAndObject: AggregateRule = { by: ['verb', 'object'], windowMinutes: 60 };
const newestFirst = (activities: Activity[]) => [...activities].sort((a, b) => (sortKeyOf(a) < sortKeyOf(b) ? 1 : -1));

/**
 * The reference: groups as the rule says them, the slow way. Two activities share a group
 * when every `by` field is equal and their times lie in the same window; a group's place is
 * its newest activity's key.
 */
function referenceGroups(activities: Activity[], rule: AggregateRule): Array<{ ids: string[]; actors: string[]; key: string; actorCount: number }> {
  const windowOf = (a: Activity) => Math.floor(new Date(a.time).getTime() / (rule.windowMinutes * 60_000));
  const value = (a: Activity, field: string) => (field === 'target' ? (a.extra?.['target'] as string | undefined) : (a as unknown as Record<string, string>)[field]);
  const together = (a: Activity, b: Activity) => windowOf(a) === windowOf(b) && rule.by.every((field) => value(a, field) === value(b, field));
  const groups: Activity[][] = [];
  for (const activity of newestFirst(activities)) {
    const group = groups.find((members) => together(members[0]!, activity));
    if (group) group.push(activity);
    else groups.push([activity]);
  }
  return groups
    .map((members) => {
      const actors = [...new Set(members.map((a) => a.actor))];
      return { ids: members.slice(0, GROUP_SAMPLE_SIZE).map((a) => a.id), actors: actors.slice(0, GROUP_SAMPLE_SIZE), actorCount: actors.length, key: sortKeyOf(members[0]!) };
    })
    .sort((a, b) => (a.key < b.key ? 1 : -1));
}

const shape = (groups: ActivityGroup[]) => groups.map((g) => ({ ids: g.activities.map((a) => a.id), actors: g.actors, actorCount: g.actorCount, key: g.key }));

describe('groupActivities', () => {
  it('groups by the rule’s fields within one window, newest group first, with counts, samples and times', () => {
    const activities = newestFirst([
      activityAt('1', 'user:a', 0, { actor: 'ann', verb: 'like', object: 'post:1' }),
      activityAt('2', 'user:b', 10, { actor: 'bob', verb: 'like', object: 'post:1' }),
      activityAt('3', 'user:b', 20, { actor: 'bob', verb: 'like', object: 'post:1' }),
      activityAt('4', 'user:c', 30, { actor: 'cat', verb: 'like', object: 'post:2' }),
      activityAt('5', 'user:a', 3600, { actor: 'ann', verb: 'like', object: 'post:1' }),
    ]);
    const groups = groupActivities(activities, byVerbAndObject, sortKeyOf);
    expect(groups.map((g) => g.activities.map((a) => a.id))).toEqual([['5'], ['4'], ['3', '2', '1']]);
    const [, , likes] = groups;
    expect(likes).toMatchObject({ verb: 'like', object: 'post:1', activityCount: 3, actorCount: 2, actors: ['bob', 'ann'], time: activities[4]!.time, updatedAt: activities[2]!.time });
    expect(likes).not.toHaveProperty('actor');
    // The same group has the same id on every read; another window is another group.
    expect(groupActivities(activities.slice(2), byVerbAndObject, sortKeyOf).at(-1)!.id).toBe(likes!.id);
    expect(groups[0]!.id).not.toBe(likes!.id);
  });

  it('groups by target (extra.target) and actor, and shows at most ten actors and activities of a larger group', () => {
    const many = Array.from({ length: 25 }, (_, i) => activityAt(`m${i}`, 'user:x', i, { actor: `u${i % 12}`, verb: 'comment', object: `c${i}`, extra: { target: 'post:9' } }));
    const [group] = groupActivities(newestFirst(many), { by: ['verb', 'target'], windowMinutes: 60 }, sortKeyOf);
    expect(group).toMatchObject({ verb: 'comment', target: 'post:9', activityCount: 25, actorCount: 12 });
    expect(group!.actors).toHaveLength(GROUP_SAMPLE_SIZE);
    expect(group!.activities.map((a) => a.id)).toEqual(Array.from({ length: 10 }, (_, i) => `m${24 - i}`));
    const byActor = groupActivities(newestFirst(many), { by: ['actor'], windowMinutes: 60 }, sortKeyOf);
    expect(byActor).toHaveLength(12);
    expect(byActor[0]).toMatchObject({ actor: 'u0', verb: 'comment', activityCount: 3 });
  });

  it('after a random play of adds, removals and updates, equals grouping the surviving activities from scratch', () => {
    for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
      const random = seededRandom(seed);
      const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;
      const rule: AggregateRule = pick([byVerbAndObject, { by: ['actor'], windowMinutes: 5 }, { by: ['verb', 'target'], windowMinutes: 30 }, { by: ['object', 'actor', 'verb'], windowMinutes: 1 }]);
      // The timeline as the store holds it: what was delivered, less removals, updated in place.
      const held = new Map<string, Activity>();
      let next = 0;
      for (let step = 0; step < 300; step++) {
        const roll = random();
        if (roll < 0.6 || held.size === 0) {
          const id = `a${next++}`;
          held.set(id, activityAt(id, 'user:p', Math.floor(random() * 7200), { actor: pick(['ann', 'bob', 'cat']), verb: pick(['like', 'comment']), object: pick(['o1', 'o2', 'o3']), extra: { target: pick(['t1', 't2']) } }));
        } else if (roll < 0.8) {
          held.delete(pick([...held.keys()]));
        } else {
          const id = pick([...held.keys()]);
          held.set(id, { ...held.get(id)!, object: pick(['o1', 'o2', 'o4']), updatedAt: '2026-02-01T00:00:00.000Z' });
        }
        if (step % 50 === 49) {
          const surviving = newestFirst([...held.values()]);
          expect({ seed, step, groups: shape(groupActivities(surviving, rule, sortKeyOf)) }).toEqual({ seed, step, groups: referenceGroups(surviving, rule) });
        }
      }
    }
  });
});

describe('pageOfGroups', () => {
  it('pages through every group exactly once, whole, with any page size', () => {
    const random = seededRandom(11);
    const activities = newestFirst(Array.from({ length: 200 }, (_, i) => activityAt(`a${i}`, 'user:p', Math.floor(random() * 20_000), { verb: `v${i % 3}`, object: `o${i % 4}` })));
    const groups = groupActivities(activities, byVerbAndObject, sortKeyOf);
    for (const size of [1, 3, 7, 50, 1000]) {
      const seen: string[] = [];
      let cursor: GroupCursor | undefined;
      for (;;) {
        const page = pageOfGroups(groups, cursor, size);
        seen.push(...page.items.map((g) => g.id));
        if (page.next === null) break;
        cursor = page.next;
      }
      expect(seen).toEqual(groups.map((g) => g.id));
    }
  });

  it('does not show again a group that moved to the top after its page, and shows the groups that were below it', () => {
    const activities = newestFirst([1, 2, 3, 4].map((n) => activityAt(`a${n}`, 'user:p', n * 3600, { object: `o${n}` })));
    const first = pageOfGroups(groupActivities(activities, byVerbAndObject, sortKeyOf), undefined, 2);
    expect(first.items.map((g) => g.object)).toEqual(['o4', 'o3']);
    // o3 gets a new activity, o1 too: both move to the top; the next page starts below o3's old place.
    const later = newestFirst([...activities, activityAt('b3', 'user:p', 3 * 3600 + 10, { object: 'o3' }), activityAt('b2', 'user:p', 2 * 3600 + 10, { object: 'o2' })]);
    const second = pageOfGroups(groupActivities(later, byVerbAndObject, sortKeyOf), first.next!, 2);
    expect(second.items.map((g) => g.object)).toEqual(['o2', 'o1']);
    expect(second.items[0]!.activityCount).toBe(2);
    expect(second.next).toBeNull();
  });
});
