import { compareNewest, sampleReaders, type NewestPage } from './newest-check.js';

const page = (...posts: string[]): NewestPage => posts.map((p) => ({ actor: p.split(' ')[0]!, object: p.split(' ')[1]! }));

describe('sampleReaders', () => {
  it('spreads the sample over all readers, first to last, without repeats', () => {
    const sample = sampleReaders(200, 30_000);
    expect(sample).toHaveLength(200);
    expect(new Set(sample).size).toBe(200);
    expect(sample[0]).toBe(0);
    expect(sample[199]).toBeGreaterThan(29_000);
    expect(sample.every((r) => r < 30_000)).toBe(true);
  });

  it('takes every reader when there are fewer than asked for', () => {
    expect(sampleReaders(200, 3)).toEqual([0, 1, 2]);
  });
});

describe('compareNewest', () => {
  const readers = ['r0', 'r1', 'r2'];

  it('counts readers whose newest posts are the same, in the same order', () => {
    const feedmill = new Map([
      ['r0', page('p1 object:1', 'p2 object:2')],
      ['r1', page()],
      ['r2', page('p3 object:3')],
    ]);
    const redis = new Map([
      ['r0', page('p1 object:1', 'p2 object:2')],
      ['r1', page()],
      ['r2', page('p3 object:3')],
    ]);
    expect(compareNewest(readers, 20, feedmill, redis)).toEqual({ readers: 3, newest: 20, entries: 3, matches: 3, mismatches: 0, examples: [] });
  });

  it('tells a different order, a missing entry and a failed read apart', () => {
    const feedmill = new Map([
      ['r0', page('p1 object:1', 'p2 object:2')],
      ['r1', page('p1 object:1', 'p2 object:2')],
      ['r2', { error: 'feedmill answered 500' }],
    ]);
    const redis = new Map([
      ['r0', page('p2 object:2', 'p1 object:1')],
      ['r1', page('p1 object:1')],
      ['r2', page('p3 object:3')],
    ]);
    const check = compareNewest(readers, 20, feedmill, redis);
    expect(check).toMatchObject({ matches: 0, mismatches: 3, entries: 4 });
    expect(check.examples).toEqual([
      'r0 (first difference at 0): feedmill [p1 object:1, p2 object:2] vs Redis [p2 object:2, p1 object:1]',
      'r1 (first difference at 1): feedmill [p1 object:1, p2 object:2] vs Redis [p1 object:1]',
      'r2: feedmill feedmill answered 500 vs Redis [p3 object:3]',
    ]);
  });

  it('catches an actor that differs under the same object', () => {
    const check = compareNewest(['r0'], 20, new Map([['r0', page('p1 object:1')]]), new Map([['r0', page('p9 object:1')]]));
    expect(check.mismatches).toBe(1);
  });

  it('keeps a few examples only', () => {
    const many = Array.from({ length: 10 }, (_, i) => `r${i}`);
    const check = compareNewest(many, 20, new Map(many.map((r) => [r, page('p1 object:1')])), new Map(), 2);
    expect(check.mismatches).toBe(10);
    expect(check.examples).toHaveLength(2);
  });
});
