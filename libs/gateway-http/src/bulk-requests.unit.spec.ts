import { z } from 'zod';
import { FeedmillError, feedConfigSchema, MAX_FOLLOWS_PER_REQUEST } from '@feedmill/contracts';
import { FeedGroups } from '@feedmill/config';
import { seededRandom } from '@feedmill/feed-models/testing';
import { parseFollowsBody } from './bulk-requests.js';

const groups = new FeedGroups(feedConfigSchema.parse({ groups: { user: { kind: 'producer' }, timeline: { kind: 'timeline', model: 'ring', cap: 10 } } }));
const time = '2026-01-01T00:00:00.000Z';

/** The shape zod alone would take, as the route's contract says: the model the parser must agree with. */
const contract = z.strictObject({
  follows: z.array(z.strictObject({ source: z.string(), target: z.string() })).max(MAX_FOLLOWS_PER_REQUEST),
});

function outcome(body: unknown): { pairs: unknown } | { code: string; field: string | undefined } {
  try {
    return { pairs: parseFollowsBody(body, groups, time).follows };
  } catch (error) {
    if (!(error instanceof FeedmillError)) throw error;
    expect(error.message.startsWith(`${error.field}: `)).toBe(true);
    return { code: error.code, field: error.field };
  }
}

/** The field zod names for its first issue, as a client indexes its body. */
function contractField(body: unknown): string | undefined {
  const result = contract.safeParse(body);
  if (result.success) return undefined;
  const issue = result.error.issues[0]!;
  const path = issue.code === 'unrecognized_keys' ? [...issue.path, issue.keys[0]!] : issue.path;
  return path.reduce<string>((field, key) => (typeof key === 'number' ? `${field}[${key}]` : field ? `${field}.${String(key)}` : String(key)), '') || 'body';
}

describe('POST /v1/follows bodies', () => {
  it('gives the pairs in order, each feed the string of the body', () => {
    const body = { follows: [{ source: 'timeline:a', target: 'user:b' }, { target: 'user:c', source: 'timeline:a' }] };
    const { follows } = parseFollowsBody(body, groups, time);
    expect(follows).toEqual([['timeline:a', 'user:b'], ['timeline:a', 'user:c']]);
    expect(follows[1]![1]).toBe(body.follows[1]!.target);
  });

  it('takes exactly what the contract takes, and names the field the contract names, for random bodies', () => {
    const random = seededRandom(17);
    const pick = <T>(values: readonly T[]): T => values[Math.floor(random() * values.length)]!;
    const goodItem = () => ({ source: `timeline:r${Math.floor(random() * 5)}`, target: `user:p${Math.floor(random() * 5)}` });
    const badItems: Array<() => unknown> = [
      () => null,
      () => 'timeline:a',
      () => [goodItem().source, goodItem().target],
      () => ({ source: goodItem().source }),
      () => ({ target: goodItem().target }),
      () => ({ ...goodItem(), extra: 1 }),
      () => ({ ...goodItem(), source: 7 }),
      () => ({ ...goodItem(), target: null }),
      () => ({ ...goodItem(), target: undefined }),
      () => ({}),
    ];
    const bodies: unknown[] = [null, [], 'follows', {}, { follows: {} }, { follows: 'x' }, { follows: [], more: [] }, { follows: [] }];
    for (let round = 0; round < 300; round++) {
      const follows: unknown[] = Array.from({ length: Math.floor(random() * 6) }, goodItem);
      const bad = random() < 0.7 ? Math.floor(random() * (follows.length + 1)) : -1;
      if (bad >= 0) follows.splice(bad, 0, pick(badItems)());
      bodies.push(random() < 0.1 ? { follows, [pick(['extra', 'Follows'])]: true } : { follows });
    }
    for (const body of bodies) {
      const field = contractField(body);
      const expected = field === undefined ? { pairs: (body as z.infer<typeof contract>).follows.map(({ source, target }) => [source, target]) } : { code: 'invalid_request', field };
      expect({ body, outcome: outcome(body) }).toEqual({ body, outcome: expected });
    }
  });

  it('refuses more follows than one request takes, naming the list', () => {
    const follows = Array.from({ length: MAX_FOLLOWS_PER_REQUEST + 1 }, (_, i) => ({ source: `timeline:r${i}`, target: 'user:p' }));
    expect(outcome({ follows })).toEqual({ code: 'invalid_request', field: 'follows' });
    expect(outcome({ follows: follows.slice(1) })).toEqual({ pairs: follows.slice(1).map(({ source, target }) => [source, target]) });
  });

  it('refuses a feed of the wrong kind or a malformed one, naming the item', () => {
    expect(outcome({ follows: [{ source: 'timeline:a', target: 'user:b' }, { source: 'user:a', target: 'user:b' }] })).toEqual({ code: 'group_cannot_follow', field: 'follows[1].source' });
    expect(outcome({ follows: [{ source: 'timeline:a', target: 'timeline:b' }] })).toEqual({ code: 'group_not_writable', field: 'follows[0].target' });
    expect(outcome({ follows: [{ source: 'timeline:a', target: 'user:b' }, { source: 'timeline:a', target: 'user:b c' }] })).toEqual({ code: 'invalid_request', field: 'follows[1].target' });
    expect(outcome({ follows: [{ source: 'timeline:a', target: 'nogroup:b' }] })).toEqual({ code: 'unknown_group', field: 'follows[0].target' });
    expect(outcome({ follows: [{ source: 'timeline', target: 'user:b' }] })).toEqual({ code: 'invalid_request', field: 'follows[0].source' });
  });
});
