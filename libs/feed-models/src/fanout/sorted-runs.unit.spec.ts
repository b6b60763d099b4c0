import { SortedRuns } from './sorted-runs.js';

describe('SortedRuns', () => {
  it('keeps each set sorted, without duplicates, and apart from the others', () => {
    const runs = new SortedRuns();
    runs.addKey(0);
    runs.addKey(1);
    for (const member of [5, 1, 9, 1, 3]) runs.add(0, member);
    runs.add(1, 4);
    expect(runs.map(0, (m) => m)).toEqual([1, 3, 5, 9]);
    expect(runs.map(1, (m) => m)).toEqual([4]);
    expect([runs.delete(0, 3), runs.delete(0, 3), runs.delete(1, 5)]).toEqual([true, false, false]);
    expect(runs.map(0, (m) => m)).toEqual([1, 5, 9]);
    expect([runs.has(0, 5), runs.has(0, 4), runs.has(7, 1), runs.countOf(7)]).toEqual([true, false, false, 0]);
    expect(runs.size).toBe(4);
  });

  it('agrees with plain sets through growth, moves and packing, and stays within a few bytes per member', () => {
    let seed = 11;
    const random = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31);
    const runs = new SortedRuns();
    const model: Array<Set<number>> = [];
    let disagreements = 0;
    for (let i = 0; i < 200_000; i++) {
      // Keys skewed like followed feeds: a few large sets, many small ones.
      const key = Math.floor(2_000 * random() ** 3);
      while (model.length <= key) {
        runs.addKey(model.length);
        model.push(new Set());
      }
      const member = Math.floor(random() * 50_000);
      const had = model[key]!.has(member);
      if (random() < 0.8) {
        if (runs.add(key, member) === had) disagreements++;
        model[key]!.add(member);
      } else {
        if (runs.delete(key, member) !== had) disagreements++;
        model[key]!.delete(member);
      }
    }
    expect(disagreements).toBe(0);
    for (const [key, members] of model.entries()) expect(runs.map(key, (m) => m)).toEqual([...members].sort((a, b) => a - b));
    expect(runs.size).toBe(model.reduce((sum, members) => sum + members.size, 0));
    // Room to grow and slots left behind, but fewer than three slots per member.
    expect(runs.slots).toBeLessThan(runs.size * 3);
  });
});
