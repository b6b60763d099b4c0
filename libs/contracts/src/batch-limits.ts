import { FeedmillError } from './errors.js';
import type { Activity } from './activity.js';
import type { FeedBatchEvent } from './events.js';

/** Follows one `POST /v1/follows` may carry. */
export const MAX_FOLLOWS_PER_REQUEST = 10_000;
/** Activities one `POST /v1/activities` may carry. */
export const MAX_ACTIVITIES_PER_REQUEST = 1_000;

/**
 * The largest batch, in bytes of JSON: of its event's data in the log, and of the request
 * that carries it to a service. A batch is one event, and each log holds one event in one
 * message: JetStream refuses a message past its `max_payload` and KurrentDB an append past
 * its `MaxAppendSize`, both 1 MiB (1,048,576 bytes) by default; NATS requests between the
 * services have the same limit. What is left is room for the envelope around the data
 * (stream, revision, type, metadata, headers). The file log holds the same bound, so that
 * an import that works in one deployment works in every one.
 *
 * 10,000 follows fit while the two feed ids of an edge average under about 90 characters
 * together (`timeline:` and `user:` with a 36-character UUID each make 86).
 */
export const MAX_BATCH_BYTES = 1_000_000;

const encoder = new TextEncoder();

/** UTF-8 bytes of the JSON of `value`. */
export function jsonBytes(value: unknown): number {
  return encoder.encode(JSON.stringify(value)).byteLength;
}

/**
 * Bytes of the JSON of `{ id, time, follows }`: a FeedsFollowed event's data, and the request
 * that asks for it. Feed ids, batch ids and times are ASCII that JSON does not escape, so
 * this is exact, counted without building a megabyte of text.
 */
export function followBatchBytes(batch: { id: string; time: string; follows: ReadonlyArray<readonly [string, string]> }): number {
  let bytes = '{"id":"","time":"","follows":[]}'.length + batch.id.length + batch.time.length + Math.max(0, batch.follows.length - 1);
  for (let index = 0; index < batch.follows.length; index++) {
    const pair = batch.follows[index]!;
    bytes += pair[0].length + pair[1].length + '["",""]'.length;
  }
  return bytes;
}

/**
 * What sealing adds to an activity at most, beyond a third more of what it seals: the log
 * stores what users typed (actor, object, foreignId, extra, refs) as one box in `"sealed"`,
 * a 16-character key id, a separator, and the base64 of a 24-byte nonce, the JSON of those
 * fields and a 16-byte tag (see the event log's `SealedEventLog`): 86 bytes, rounded up.
 */
const SEALED_BOX_EXTRA_BYTES = 96;

/**
 * UTF-8 bytes of an activity's JSON as the log stores it, sealed: at most this, counted from
 * its plain JSON without sealing it. Base64 makes the sealed fields a third larger, which
 * takes an import near the limit in plain bytes past what JetStream takes in one message.
 */
export function storedActivityBytes(activity: Activity): number {
  const { actor, object, foreignId, extra, refs } = activity;
  const sealed = jsonBytes({ actor, object, foreignId, extra, refs });
  return jsonBytes(activity) + Math.ceil(sealed / 3) + SEALED_BOX_EXTRA_BYTES;
}

/** UTF-8 bytes of the JSON of a batch event's data as the log will store it (at most, for activities, which it seals). */
export function batchEventBytes(event: FeedBatchEvent): number {
  if (event.type === 'FeedsFollowed') return followBatchBytes(event.data);
  const { id, activities } = event.data;
  let bytes = '{"id":"","activities":[]}'.length + id.length + Math.max(0, activities.length - 1);
  for (const activity of activities) bytes += storedActivityBytes(activity);
  return bytes;
}

/**
 * Refuses a batch of `bytes` over {@link MAX_BATCH_BYTES} with `payload_too_large` (413),
 * naming the request's field: nothing is written, and the caller sends fewer per request.
 */
export function assertBatchFits(bytes: number, count: number, field: 'follows' | 'activities'): void {
  if (bytes <= MAX_BATCH_BYTES) return;
  throw new FeedmillError(
    'payload_too_large',
    `${field}: ${count} ${field} make ${bytes} bytes to write, over the ${MAX_BATCH_BYTES} one request may write: send fewer per request`,
    field,
  );
}
