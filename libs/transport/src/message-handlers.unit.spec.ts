import { subjects } from '@feedmill/contracts';
import { parseRequest } from './message-handlers.js';
import { MAX_INPUT_DEPTH, parseInput } from './validation.js';
import { z } from 'zod';

/** `levels` objects, each inside the one before. */
function nested(levels: number): unknown {
  let value: unknown = 'leaf';
  for (let level = 0; level < levels; level++) value = { k: value };
  return value;
}

describe('parseRequest', () => {
  it('takes a delivery of an activity whose extra nests as deep as the gateway lets a body nest, a few levels further down', () => {
    // As deep as a post's body may be: `extra` is one level in, and `k` holds the rest.
    const extra = { k: nested(MAX_INPUT_DEPTH - 2) };
    expect(() => parseInput(z.strictObject({ extra: z.record(z.string(), z.json()) }), { extra }, 'body')).not.toThrow();
    const activity = { id: 'a1', feed: 'user:a', actor: 'a', verb: 'post', object: 'o', time: '2026-01-01T00:00:00.000Z', extra };
    const request = { after: 0, position: 1, deliveries: [{ kind: 'insert', readers: ['timeline:r'], activity }] };
    expect(parseRequest(subjects.timeline.deliver, request).deliveries).toHaveLength(1);
    // Still refused past that, before a schema walks it.
    const deeper = { ...request, deliveries: [{ ...request.deliveries[0], activity: { ...activity, extra: { k: nested(5_000) } } }] };
    expect(() => parseRequest(subjects.timeline.deliver, deeper)).toThrow(expect.objectContaining({ code: 'invalid_request' }));
  });
});
