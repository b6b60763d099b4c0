import type { Msg } from '@nats-io/transport-node';
import { ReplyParts } from './reply-parts.js';

const part = (data: string | Uint8Array) => ({ data: typeof data === 'string' ? Buffer.from(data) : data }) as unknown as Msg;

describe('a reply in parts', () => {
  it('is whole once its last part is in, its bytes joined in order (a character split between parts too)', () => {
    const bytes = Buffer.from('{"response":"é€"}');
    const parts = new ReplyParts();
    // Cut between the two bytes of the é.
    expect(parts.add(part(bytes.subarray(0, 14)), '1/2')).toBeUndefined();
    const whole = parts.add(part(bytes.subarray(14)), '2/2');
    expect(whole?.json()).toEqual({ response: 'é€' });
  });

  it.each([
    ['a part out of order', ['1/3', '3/3']],
    ['a part that counts otherwise', ['1/3', '2/2']],
    ['a part past its count', ['2/1']],
  ])('refuses %s', (_, headers) => {
    const parts = new ReplyParts();
    const last = headers.pop()!;
    for (const header of headers) parts.add(part('x'), header);
    expect(() => parts.add(part('x'), last)).toThrow(/reply part/);
  });
});
