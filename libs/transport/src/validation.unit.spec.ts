import { z } from 'zod';
import { parseInput } from './validation.js';

describe('parseInput', () => {
  const schema = z.strictObject({ verb: z.string(), nested: z.strictObject({ n: z.number() }).optional() });

  it('names the first bad field, with where it came from', () => {
    expect(() => parseInput(schema, { verb: 3 }, 'body')).toThrow(expect.objectContaining({ code: 'invalid_request', field: 'body.verb' }));
    expect(() => parseInput(schema, { verb: 'v', nested: { n: 1, extra: 2 } }, 'body')).toThrow(
      expect.objectContaining({ field: 'body.nested.extra', message: 'body.nested.extra: is not a known field' }),
    );
    expect(parseInput(schema, { verb: 'v' })).toEqual({ verb: 'v' });
  });
});
