import type { NewestPage } from './newest-check.js';
import { compareTimelineSets } from './timeline-sets.js';

const page = (...posts: string[]): NewestPage => posts.map((post) => ({ actor: post.split(' ')[0]!, object: post.split(' ')[1]! }));

describe('compareTimelineSets', () => {
  it('holds the same posts in another order, or one of them twice, to be the same timeline', () => {
    const ring = new Map([['r1', page('p1 a', 'p2 b', 'p1 c')]]);
    const pull = new Map([['r1', page('p2 b', 'p1 a', 'p1 c', 'p1 a')]]);
    expect(compareTimelineSets(['r1'], { name: 'ring', pages: ring }, { name: 'pull', pages: pull })).toEqual({ readers: 1, entries: 3, matches: 1, mismatches: 0, examples: [] });
  });

  it('names what only one side holds, for each reader that differs', () => {
    const ring = new Map([
      ['r1', page('p1 a', 'p2 b')],
      ['r2', page('p3 x', 'p3 y', 'p3 z', 'p3 w', 'p4 v')],
      ['r3', page('p1 a')],
    ]);
    const hybrid = new Map([
      ['r1', page('p1 a', 'p2 b')],
      ['r2', page('p4 v', 'p5 u')],
      ['r3', page('p1 a')],
    ]);
    const check = compareTimelineSets(['r1', 'r2', 'r3'], { name: 'ring', pages: ring }, { name: 'hybrid', pages: hybrid });
    expect(check).toMatchObject({ readers: 3, matches: 2, mismatches: 1, entries: 8 });
    expect(check.examples).toEqual(['r2: 4 only in ring (p3 x, p3 y, p3 z, ...), 1 only in hybrid (p5 u)']);
  });

  it('counts a reader that could not be read on either side as different', () => {
    const ring = new Map<string, NewestPage>([['r1', page('p1 a')]]);
    const hybrid = new Map<string, NewestPage>([['r1', { error: 'feedmill answered 500' }]]);
    const check = compareTimelineSets(['r1', 'r2'], { name: 'ring', pages: ring }, { name: 'hybrid', pages: hybrid });
    expect(check).toMatchObject({ matches: 0, mismatches: 2 });
    expect(check.examples).toEqual(['r1: ring read, hybrid feedmill answered 500', 'r2: ring not read, hybrid not read']);
  });
});
