import { createDecipheriv, createSecretKey, randomFillSync, type KeyObject } from 'node:crypto';
import sodium from 'sodium-native';
import type { Activity, FeedId } from '@feedmill/contracts';

/**
 * A feed's data key: the content of the feed's activities is sealed with it, and destroying
 * it leaves that content unreadable wherever it was copied (crypto-shredding).
 */
export interface FeedKey {
  /** Names the key in sealed boxes: base64url (no `.` and no `:`, the separators that end it in a box). */
  id: string;
  feed: FeedId;
  /** 32 random bytes: the key of the boxes sealed before XChaCha20-Poly1305 (AES-256-GCM), and what that cipher's key is derived from. */
  secret: Buffer;
}

/** Which key a box was sealed with: the feed is read in clear beside the box. */
export interface FeedKeyRef {
  feed: FeedId;
  id: string;
}

/**
 * Random bytes for new keys, drawn 256 keys at a time: a synchronous call for random bytes
 * costs several microseconds, and the first posts of thousands of new feeds each make a key.
 */
const KEY_RANDOM_BYTES = 12 + 32;
const keyRandom = Buffer.alloc(KEY_RANDOM_BYTES * 256);
let nextKeyRandom = keyRandom.length;

/** A new random key for `feed`. */
export function newFeedKey(feed: FeedId): FeedKey {
  if (nextKeyRandom === keyRandom.length) {
    randomFillSync(keyRandom);
    nextKeyRandom = 0;
  }
  const drawn = keyRandom.subarray(nextKeyRandom, (nextKeyRandom += KEY_RANDOM_BYTES));
  const key = { id: drawn.subarray(0, 12).toString('base64url'), feed, secret: Buffer.from(drawn.subarray(12)) };
  // The secret lives on in its own copy only: the pool's bytes are wiped once drawn.
  drawn.fill(0);
  return key;
}

/** The event types whose data holds what users typed: the only ones sealed. */
export const SEALED_EVENT_TYPES: ReadonlySet<string> = new Set(['ActivityAdded', 'ActivitiesAdded', 'ActivityUpdated']);

/**
 * Boxes name their cipher by the character after the key id:
 * - `:` XChaCha20-Poly1305 (libsodium), written today: `<key id>:<base64 of nonce, ciphertext, tag>`.
 *   A box costs about half of what Node's AES-GCM does (a cipher object is made per message
 *   there), and a box is sealed on every post and opened on every replay.
 * - `.` AES-256-GCM (Node's crypto), written before: `<key id>.<base64 of iv, ciphertext, tag>`.
 *   Still opened, never written.
 * Both bind the box to its activity (`feed`, `id`) as additional data, so that a box moved
 * to another activity does not open.
 */
const XCHACHA_SEPARATOR = ':';
const NONCE_BYTES = sodium.crypto_aead_xchacha20poly1305_ietf_NPUBBYTES;
const TAG_BYTES = sodium.crypto_aead_xchacha20poly1305_ietf_ABYTES;
const AES_GCM_IV_BYTES = 12;
const AES_GCM_TAG_BYTES = 16;

/**
 * Random nonces drawn 1,024 at a time: a call for random bytes costs about as much as the
 * cipher itself, and a seal happens on every post. Still 192 random bits each.
 */
const nonces = Buffer.alloc(NONCE_BYTES * 1024);
let nextNonce = nonces.length;
function nonceInto(target: Buffer): void {
  if (nextNonce === nonces.length) {
    randomFillSync(nonces);
    nextNonce = 0;
  }
  nonces.copy(target, 0, nextNonce, nextNonce + NONCE_BYTES);
  nextNonce += NONCE_BYTES;
}

const boundTo = (key: FeedKey, activityId: string) => Buffer.from(`${key.feed}\n${activityId}`);

/**
 * The XChaCha20-Poly1305 key of a feed key: its secret keyed into BLAKE2b with this
 * cipher's name, so that the secret is never used as a key by two ciphers (its older boxes
 * are AES-GCM's). Derived once per key.
 */
const XCHACHA_KEY_CONTEXT = Buffer.from('feedmill sealed content: xchacha20-poly1305');
const xchachaKeys = new WeakMap<FeedKey, Buffer>();
function xchachaKeyOf(key: FeedKey): Buffer {
  let derived = xchachaKeys.get(key);
  if (!derived) {
    derived = Buffer.alloc(sodium.crypto_aead_xchacha20poly1305_ietf_KEYBYTES);
    sodium.crypto_generichash(derived, XCHACHA_KEY_CONTEXT, key.secret);
    xchachaKeys.set(key, derived);
  }
  return derived;
}

/** Seals `plain` (JSON) with `key`, bound to the activity (`feed`, `id`): `<key id>:<base64 of nonce, ciphertext, tag>`. */
export function seal(key: FeedKey, activityId: string, plain: unknown): string {
  const message = Buffer.from(JSON.stringify(plain), 'utf8');
  const box = Buffer.allocUnsafe(NONCE_BYTES + message.length + TAG_BYTES);
  const nonce = box.subarray(0, NONCE_BYTES);
  nonceInto(nonce);
  sodium.crypto_aead_xchacha20poly1305_ietf_encrypt(box.subarray(NONCE_BYTES), message, boundTo(key, activityId), null, nonce, xchachaKeyOf(key));
  return `${key.id}${XCHACHA_SEPARATOR}${box.toString('base64')}`;
}

const COLON = XCHACHA_SEPARATOR.charCodeAt(0);
const DOT = '.'.charCodeAt(0);

/**
 * Where a box's key id ends: at the separator naming its cipher, `:` (XChaCha20-Poly1305) or
 * `.` (AES-GCM). Neither is in a key id (base64url) nor in the base64 after it, so the first
 * of either is the one; looked for without a regular expression, as every replayed activity
 * asks.
 */
function separatorOf(box: string): number {
  for (let index = 0; index < box.length; index++) {
    const char = box.charCodeAt(index);
    if (char === COLON || char === DOT) return index;
  }
  return -1;
}

/** The id of the key a box was sealed with. */
export function keyIdOf(box: string): string {
  const separator = separatorOf(box);
  if (separator <= 0) throw new SealedContentError(`a sealed box names no key: ${box.slice(0, 20)}`);
  return box.slice(0, separator);
}

/** Opens a box sealed by {@link seal} (or by the AES-GCM sealing before it); throws when it was not sealed with `key` for this activity. */
export function open(key: FeedKey, activityId: string, box: string): unknown {
  const separator = key.id.length;
  const bytes = Buffer.from(box.slice(separator + 1), 'base64');
  try {
    const plain = box[separator] === XCHACHA_SEPARATOR ? openXChaCha(key, activityId, bytes) : openAesGcm(key, activityId, bytes);
    return JSON.parse(plain.toString('utf8'));
  } catch (error) {
    if (error instanceof SealedContentError) throw error;
    throw new SealedContentError(`sealed box of ${activityId} does not open with key ${key.id}`, { cause: error });
  }
}

function openXChaCha(key: FeedKey, activityId: string, bytes: Buffer): Buffer {
  if (bytes.length < NONCE_BYTES + TAG_BYTES) throw new SealedContentError(`sealed box of ${activityId} is cut short`);
  const plain = Buffer.allocUnsafe(bytes.length - NONCE_BYTES - TAG_BYTES);
  sodium.crypto_aead_xchacha20poly1305_ietf_decrypt(plain, null, bytes.subarray(NONCE_BYTES), boundTo(key, activityId), bytes.subarray(0, NONCE_BYTES), xchachaKeyOf(key));
  return plain;
}

/** Each key imported once as a key object, which a cipher takes without copying and checking it again. */
const keyObjects = new WeakMap<FeedKey, KeyObject>();
function keyObjectOf(key: FeedKey): KeyObject {
  let object = keyObjects.get(key);
  if (!object) keyObjects.set(key, (object = createSecretKey(key.secret)));
  return object;
}

function openAesGcm(key: FeedKey, activityId: string, bytes: Buffer): Buffer {
  if (bytes.length < AES_GCM_IV_BYTES + AES_GCM_TAG_BYTES) throw new SealedContentError(`sealed box of ${activityId} is cut short`);
  const decipher = createDecipheriv('aes-256-gcm', keyObjectOf(key), bytes.subarray(0, AES_GCM_IV_BYTES));
  decipher.setAAD(boundTo(key, activityId));
  decipher.setAuthTag(bytes.subarray(bytes.length - AES_GCM_TAG_BYTES));
  return Buffer.concat([decipher.update(bytes.subarray(AES_GCM_IV_BYTES, bytes.length - AES_GCM_TAG_BYTES)), decipher.final()]);
}

export class SealedContentError extends Error {
  override readonly name = 'SealedContentError';
}

/**
 * The fields an activity keeps in clear: what orders and routes it (fan-out's planning, the
 * timelines' keys, who was addressed), all identifiers or times. Everything a user typed
 * (actor, object, foreignId, extra, refs) goes into the box.
 */
type ClearActivity = Pick<Activity, 'id' | 'feed' | 'verb' | 'time' | 'bumpedAt' | 'updatedAt' | 'to'> & { sealed: string };
type SealedFields = Pick<Activity, 'actor' | 'object' | 'foreignId' | 'extra' | 'refs'>;

export function sealActivity(activity: Activity, key: FeedKey): ClearActivity {
  const { id, feed, actor, verb, object, time, foreignId, extra, bumpedAt, updatedAt, to, refs } = activity;
  const hidden: SealedFields = { actor, object };
  if (foreignId !== undefined) hidden.foreignId = foreignId;
  if (extra !== undefined) hidden.extra = extra;
  if (refs !== undefined) hidden.refs = refs;
  const clear: ClearActivity = { id, feed, verb, time, sealed: seal(key, id, hidden) };
  if (bumpedAt !== undefined) clear.bumpedAt = bumpedAt;
  if (updatedAt !== undefined) clear.updatedAt = updatedAt;
  if (to !== undefined) clear.to = to;
  return clear;
}

/** The activity a sealed one stands for, its fields in the schema's order (as a decode of a plain one gives them). */
function openActivity(clear: ClearActivity, key: FeedKey): Activity {
  const { actor, object, foreignId, extra, refs } = open(key, clear.id, clear.sealed) as SealedFields;
  const activity: Activity = { id: clear.id, feed: clear.feed, actor, verb: clear.verb, object, time: clear.time };
  if (foreignId !== undefined) activity.foreignId = foreignId;
  if (extra !== undefined) activity.extra = extra;
  if (clear.bumpedAt !== undefined) activity.bumpedAt = clear.bumpedAt;
  if (clear.updatedAt !== undefined) activity.updatedAt = clear.updatedAt;
  if (clear.to !== undefined) activity.to = clear.to;
  if (refs !== undefined) activity.refs = refs;
  return activity;
}

const isSealed = (value: unknown): value is { sealed: string } => typeof (value as { sealed?: unknown } | null)?.sealed === 'string';

interface UpdatedData {
  id: string;
  feed: FeedId;
  time: string;
  object?: string;
  extra?: Record<string, unknown>;
}

/** The feeds whose keys sealing an event of this type needs (none for a type that is not sealed). */
export function feedsToSeal(type: string, data: unknown): FeedId[] {
  switch (type) {
    case 'ActivityAdded':
      return [(data as { activity: Activity }).activity.feed];
    case 'ActivitiesAdded':
      return [...new Set((data as { activities: Activity[] }).activities.map((activity) => activity.feed))];
    case 'ActivityUpdated':
      return [(data as UpdatedData).feed];
    default:
      return [];
  }
}

/** The data of an event as the log stores it, its content sealed with its feed's key. */
export function sealEventData(type: string, data: unknown, keyOf: (feed: FeedId) => FeedKey): unknown {
  switch (type) {
    case 'ActivityAdded': {
      const { activity } = data as { activity: Activity };
      return { activity: sealActivity(activity, keyOf(activity.feed)) };
    }
    case 'ActivitiesAdded': {
      const { id, activities } = data as { id: string; activities: Activity[] };
      return { id, activities: activities.map((activity) => sealActivity(activity, keyOf(activity.feed))) };
    }
    case 'ActivityUpdated': {
      const { id, feed, time, object, extra } = data as UpdatedData;
      const hidden: Pick<UpdatedData, 'object' | 'extra'> = {};
      if (object !== undefined) hidden.object = object;
      if (extra !== undefined) hidden.extra = extra;
      return { id, feed, time, sealed: seal(keyOf(feed), id, hidden) };
    }
    default:
      return data;
  }
}

/** The keys a stored event's boxes were sealed with; none for a plain (or older, unsealed) event. */
export function sealedKeyRefs(type: string, data: unknown): FeedKeyRef[] {
  if (!SEALED_EVENT_TYPES.has(type)) return [];
  const refs: FeedKeyRef[] = [];
  const add = (clear: unknown) => {
    if (isSealed(clear)) refs.push({ feed: (clear as unknown as { feed: FeedId }).feed, id: keyIdOf(clear.sealed) });
  };
  if (type === 'ActivityAdded') add((data as { activity: unknown }).activity);
  else if (type === 'ActivitiesAdded') for (const activity of (data as { activities: unknown[] }).activities) add(activity);
  else add(data);
  return refs;
}

/** What a stored event reads as once its boxes are opened: today's plain shape, or a tombstone. */
export interface OpenedEvent {
  type: string;
  data: unknown;
  /** False when a box's key is gone: `type` is then `ContentErased`, or a batch lost some items. */
  whole: boolean;
}

/**
 * Opens the boxes of a stored event with the keys `keyOf` finds; a box whose key is gone
 * (destroyed: its feed was erased) leaves a tombstone. A single event becomes a
 * `ContentErased` with its type, feed and activity id; a batch loses the items whose key is
 * gone, and becomes a `ContentErased` when none is left. Plain events (written before
 * sealing, or of types that are not sealed) are returned as they are.
 */
export function openEventData(type: string, data: unknown, keyOf: (ref: FeedKeyRef) => FeedKey | undefined): OpenedEvent {
  const keyFor = (clear: { feed: FeedId; sealed: string }) => keyOf({ feed: clear.feed, id: keyIdOf(clear.sealed) });
  switch (type) {
    case 'ActivityAdded': {
      const clear = (data as { activity: unknown }).activity;
      if (!isSealed(clear)) return { type, data, whole: true };
      const sealed = clear as ClearActivity;
      const key = keyFor(sealed);
      if (!key) return erased(type, sealed.feed, [sealed.id]);
      return { type, data: { activity: openActivity(sealed, key) }, whole: true };
    }
    case 'ActivitiesAdded': {
      const { id, activities } = data as { id: string; activities: unknown[] };
      if (!activities.some(isSealed)) return { type, data, whole: true };
      const opened: Activity[] = [];
      const gone: string[] = [];
      for (const item of activities) {
        if (!isSealed(item)) {
          opened.push(item as Activity);
          continue;
        }
        const sealed = item as ClearActivity;
        const key = keyFor(sealed);
        if (key) opened.push(openActivity(sealed, key));
        else gone.push(sealed.id);
      }
      if (opened.length === 0) return erased(type, (activities[0] as ClearActivity).feed, gone);
      return { type, data: { id, activities: opened }, whole: gone.length === 0 };
    }
    case 'ActivityUpdated': {
      if (!isSealed(data)) return { type, data, whole: true };
      const { id, feed, time, sealed } = data as UpdatedData & { sealed: string };
      const key = keyFor({ feed, sealed });
      if (!key) return erased(type, feed, [id]);
      const { object, extra } = open(key, id, sealed) as Pick<UpdatedData, 'object' | 'extra'>;
      return { type, data: { id, feed, time, ...(object !== undefined && { object }), ...(extra !== undefined && { extra }) }, whole: true };
    }
    default:
      return { type, data, whole: true };
  }
}

/**
 * The tombstone a stored event reads as when none of its boxes can be opened any more (every
 * key it names is gone), found without opening anything; undefined when some content still
 * opens (or the event is plain).
 */
export function tombstoneOf(type: string, data: unknown, keyOf: (ref: FeedKeyRef) => FeedKey | undefined, refs = sealedKeyRefs(type, data)): OpenedEvent | undefined {
  if (!SEALED_EVENT_TYPES.has(type)) return undefined;
  if (refs.length === 0 || refs.some((ref) => keyOf(ref) !== undefined)) return undefined;
  if (type === 'ActivitiesAdded' && (data as { activities: unknown[] }).activities.some((item) => !isSealed(item))) return undefined;
  return openEventData(type, data, () => undefined);
}

function erased(of: string, feed: FeedId, ids: string[]): OpenedEvent {
  return { type: 'ContentErased', data: { of, feed, ids }, whole: false };
}
