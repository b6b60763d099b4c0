import { totalWork, workBetween, workByPhase } from './timeline-work.js';

describe('timeline work', () => {
  it('is the counters’ growth between two readings, entries written and feeds queried apart', () => {
    const work = workBetween({ entriesWritten: 1_000, feedsQueried: 30 }, { entriesWritten: 1_500, feedsQueried: 230 });
    expect(work).toEqual({ entriesWritten: 500, feedsQueried: 200 });
    expect(totalWork(work)).toBe(700);
  });

  it('adds the phases up', () => {
    expect(workByPhase({ entriesWritten: 10, feedsQueried: 1 }, { entriesWritten: 5, feedsQueried: 20 }).total).toEqual({ entriesWritten: 15, feedsQueried: 21 });
  });
});
