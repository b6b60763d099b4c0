import { FeedGroups } from '@feedmill/config';
import { feedConfigSchema } from '@feedmill/contracts';
import { resolveFeed } from './feed-params.js';

const groups = new FeedGroups(feedConfigSchema.parse({ groups: { user: { kind: 'producer' }, timeline: { kind: 'timeline', model: 'ring', cap: 10 } } }));
const failure = (resolve: () => unknown) => {
  try {
    resolve();
  } catch (error) {
    return error;
  }
  throw new Error('resolved');
};

describe('feed path parameters', () => {
  it('names the parameter that is wrong, for the first feed of a path and for the second', () => {
    const target = { group: 'targetGroup', id: 'targetId' };
    expect(resolveFeed(groups, 'user', 'bob', 'producer', target)).toBe('user:bob');
    expect(failure(() => resolveFeed(groups, 'nosuch', 'bob', undefined, target))).toMatchObject({ code: 'unknown_group', field: 'targetGroup' });
    expect(failure(() => resolveFeed(groups, 'user', 'b o b', undefined, target))).toMatchObject({ code: 'invalid_request', field: 'targetId' });
    expect(failure(() => resolveFeed(groups, 'user', 'bob', 'timeline', target))).toMatchObject({ code: 'group_cannot_follow', field: 'targetGroup' });
    expect(failure(() => resolveFeed(groups, 'nosuch', 'bob'))).toMatchObject({ code: 'unknown_group', field: 'group' });
  });
});
