import { mergeNewestFirst } from './newest-first-merge.js';

describe('mergeNewestFirst', () => {
  it('takes the newest items across sources up to the limit', () => {
    const keyOf = (n: number) => String(n).padStart(3, '0');
    const merged = mergeNewestFirst(
      [
        { items: [1, 4, 9], next: 2 },
        { items: [2, 3, 10], next: 2 },
        { items: [], next: -1 },
        { items: [5, 6, 7, 8], next: 3 },
      ],
      keyOf,
      6,
    );
    expect(merged).toEqual([10, 9, 8, 7, 6, 5]);
  });
});
