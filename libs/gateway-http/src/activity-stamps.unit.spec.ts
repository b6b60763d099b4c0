import { jest } from '@jest/globals';
import { sortKeyOf } from '@feedmill/contracts';
import { newActivityId, newActivityStamp, receivedAtOf } from './activity-stamps.js';

describe('activity stamps', () => {
  afterEach(() => jest.restoreAllMocks());

  it('sort in the order they were made, thousands in one millisecond', () => {
    const stamps = Array.from({ length: 5_000 }, () => newActivityStamp());
    const keys = stamps.map((stamp) => sortKeyOf({ time: stamp.receivedAt, id: stamp.id }));
    expect(new Set(stamps.map((s) => s.receivedAt)).size).toBeLessThan(stamps.length);
    for (let i = 1; i < keys.length; i++) expect(keys[i]! > keys[i - 1]!).toBe(true);
  });

  it('keep their order when the clock steps back, and their received time does not step back', () => {
    const first = newActivityStamp();
    jest.spyOn(Date, 'now').mockReturnValue(Date.parse(first.receivedAt) - 60_000);
    const second = newActivityStamp();
    expect(second.id > first.id).toBe(true);
    expect(second.receivedAt).toBe(first.receivedAt);
  });

  it('draw fresh random bytes for every id, past many refills of the pool they come from', () => {
    const ids = Array.from({ length: 20_000 }, () => newActivityId());
    // The last 42 bits are random alone (the sequence fills the bits before them).
    expect(new Set(ids.map((id) => id.slice(-12))).size).toBe(ids.length);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('read their received time from the id', () => {
    const before = Date.now();
    const id = newActivityId();
    const received = Date.parse(receivedAtOf(id));
    expect(received).toBeGreaterThanOrEqual(before);
    expect(received).toBeLessThanOrEqual(Date.now());
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});
