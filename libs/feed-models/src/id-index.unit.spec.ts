import { IdIndex, NOT_INDEXED } from './id-index.js';
import { seededRandom } from './testing.js';

describe('IdIndex', () => {
  it('answers as a Map does through sets, replacements and deletes, across growth and wrap-around', () => {
    const next = seededRandom(3);
    const keys = Array.from({ length: 3_000 }, (_, i) => (i % 3 === 0 ? `id-${i}` : `${Math.floor(next() * 1e9).toString(36)}-${i}`));
    // Values name their key; a replaced value names the same key.
    const keyOfValue = (value: number) => keys[value % keys.length]!;
    const index = new IdIndex(keyOfValue);
    const model = new Map<string, number>();
    for (let step = 0; step < 20_000; step++) {
      const k = Math.floor(next() * keys.length);
      const key = keys[k]!;
      const roll = next();
      if (roll < 0.55) {
        const value = k + keys.length * Math.floor(next() * 3);
        index.set(key, value);
        model.set(key, value);
      } else if (roll < 0.85) {
        expect(index.delete(key)).toBe(model.delete(key));
      } else {
        expect(index.get(key)).toBe(model.get(key) ?? NOT_INDEXED);
      }
      expect(index.size).toBe(model.size);
    }
    for (const key of keys) expect(index.get(key)).toBe(model.get(key) ?? NOT_INDEXED);
  });

  it('tells apart keys whose hashes collide in the slot they start from', () => {
    const keys = Array.from({ length: 5_000 }, (_, i) => `k${i}`);
    const index = new IdIndex((value) => keys[value]!);
    keys.forEach((key, value) => index.set(key, value));
    for (const [value, key] of keys.entries()) if (value % 2) index.delete(key);
    for (const [value, key] of keys.entries()) expect(index.get(key)).toBe(value % 2 ? NOT_INDEXED : value);
    expect(index.get('absent')).toBe(NOT_INDEXED);
  });

  it('refuses values it cannot hold', () => {
    const index = new IdIndex(() => 'a');
    expect(() => index.set('a', -1)).toThrow(RangeError);
    expect(() => index.set('a', 2 ** 31)).toThrow(RangeError);
    expect(() => index.set('a', 1.5)).toThrow(RangeError);
  });
});
