import { z } from 'zod';
import { MAX_INPUT_DEPTH, parseInput } from './validation.js';

describe('parseInput', () => {
  const schema = z.strictObject({ verb: z.string(), nested: z.strictObject({ n: z.number() }).optional(), tags: z.array(z.strictObject({ name: z.string() })).optional() });

  it('names the first bad field, with where it came from', () => {
    expect(() => parseInput(schema, { verb: 3 }, 'body')).toThrow(expect.objectContaining({ code: 'invalid_request', field: 'body.verb' }));
    expect(() => parseInput(schema, { verb: 'v', nested: { n: 1, extra: 2 } }, 'body')).toThrow(
      expect.objectContaining({ field: 'body.nested.extra', message: 'body.nested.extra: is not a known field' }),
    );
    // Array indexes in brackets, as the checks after the schema name them (`body.to[1]`).
    expect(() => parseInput(schema, { verb: 'v', tags: [{ name: 'a' }, { name: 2 }] }, 'body')).toThrow(expect.objectContaining({ field: 'body.tags[1].name' }));
    expect(() => parseInput(schema, { verb: 'v', tags: [{ name: 'a', more: 1 }] }, 'body')).toThrow(expect.objectContaining({ field: 'body.tags[0].more' }));
    expect(parseInput(schema, { verb: 'v' })).toEqual({ verb: 'v' });
  });

  it('refuses input nested deeper than it takes, naming where, before the schema walks it', () => {
    const nested = (levels: number) => {
      let value: unknown = 'leaf';
      for (let level = 0; level < levels; level++) value = level % 2 === 0 ? [value] : { a: value };
      return value;
    };
    const extra = z.strictObject({ extra: z.record(z.string(), z.json()) });
    expect(parseInput(extra, { extra: { deep: nested(MAX_INPUT_DEPTH - 2) } }, 'body').extra).toEqual({ deep: nested(MAX_INPUT_DEPTH - 2) });
    for (const levels of [MAX_INPUT_DEPTH, 20_000]) {
      expect(() => parseInput(extra, { extra: { deep: nested(levels) } }, 'body')).toThrow(
        expect.objectContaining({ code: 'invalid_request', field: expect.stringMatching(/^body\.extra\.deep\.a\[0\]$/), message: expect.stringMatching(new RegExp(`^body\\.extra\\.deep\\.a\\[0\\]: nests more than ${MAX_INPUT_DEPTH} levels of objects and arrays$`)) }),
      );
    }
  });
});
