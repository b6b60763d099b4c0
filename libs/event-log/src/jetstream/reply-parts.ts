import { headers as natsHeaders, type Msg, type MsgHdrs, type NatsConnection } from '@nats-io/transport-node';

/**
 * On each message of a reply sent in parts: `index/count`, from 1. A reply larger than the
 * connection's `max_payload` (1 MiB by default) cannot be one NATS message: nats.js refuses
 * to publish it, and the requester would wait out its timeout for an answer that never
 * comes (a page of 25 activities of 48 KiB each is one).
 */
export const REPLY_PART_HEADER = 'Feedmill-Reply-Part';

/** Room left in each message for its headers and the protocol's framing. */
const HEADROOM_BYTES = 4_096;

/** The most bytes of data one message on `connection` may carry: its server's `max_payload`, less room for headers and framing. */
export function messageBytesOf(connection: NatsConnection): number {
  return (connection.info?.max_payload ?? Number.POSITIVE_INFINITY) - HEADROOM_BYTES;
}

/** Whether `text` is at most `bytes` of UTF-8; counted only when its length does not tell (a character is at most 3 bytes). */
export function fitsIn(text: string, bytes: number): boolean {
  return text.length * 3 <= bytes || Buffer.byteLength(text) <= bytes;
}

/** What a request's reply offers its reader, whether it came as one message or was put together from parts. */
export type Reply = Pick<Msg, 'data' | 'headers' | 'json' | 'string'>;

/**
 * Sends `data` to `subject`: as one message when it fits the connection's `max_payload`,
 * else in parts that each fit, every part carrying {@link REPLY_PART_HEADER} and the reply's
 * own headers. A connection's messages reach a subscriber in the order they were published,
 * so the parts arrive in order.
 */
export function publishReply(connection: NatsConnection, subject: string, data: string, headers?: MsgHdrs): void {
  const partBytes = messageBytesOf(connection);
  if (fitsIn(data, partBytes)) {
    connection.publish(subject, data, { headers });
    return;
  }
  const bytes = Buffer.from(data);
  const count = Math.ceil(bytes.length / partBytes);
  for (let index = 0; index < count; index++) {
    const partHeaders = natsHeaders();
    for (const [key, values] of headers ?? []) for (const value of values) partHeaders.append(key, value);
    partHeaders.set(REPLY_PART_HEADER, `${index + 1}/${count}`);
    connection.publish(subject, bytes.subarray(index * partBytes, (index + 1) * partBytes), { headers: partHeaders });
  }
}

/** The parts of one reply received so far. */
export class ReplyParts {
  private readonly parts: Uint8Array[] = [];
  private count?: number;

  /**
   * Takes the next part, `message`, whose header said `part`; the whole reply once the last
   * arrived, else undefined. Throws on a part out of order, which a lost message would cause.
   */
  add(message: Msg, part: string): Reply | undefined {
    const [index, count] = part.split('/').map(Number) as [number, number];
    this.count ??= count;
    if (index !== this.parts.length + 1 || count !== this.count || !(count >= index)) throw new Error(`reply part ${part} arrived after ${this.parts.length} parts of ${this.count}`);
    this.parts.push(message.data);
    return index === count ? assembled(Buffer.concat(this.parts), message.headers) : undefined;
  }
}

function assembled(data: Buffer, headers: MsgHdrs | undefined): Reply {
  return {
    data,
    headers,
    string: () => data.toString('utf8'),
    json: <T>() => JSON.parse(data.toString('utf8')) as T,
  };
}
