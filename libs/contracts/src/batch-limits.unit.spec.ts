import { assertBatchFits, batchEventBytes, followBatchBytes, MAX_BATCH_BYTES, MAX_FOLLOWS_PER_REQUEST } from './batch-limits.js';
import type { FeedId } from './feeds.js';

const uuid = (n: number) => `${n.toString(16).padStart(8, '0')}-5f4e-4a51-9d3c-2f1e8a6b4c10`;

describe('batch limits', () => {
  it('counts the bytes of a follow batch exactly as its JSON has them', () => {
    for (const follows of [[], [['timeline:a', 'user:b']], [['timeline:a', 'user:b'], ['timeline:long_id-9', 'user:x']]] as Array<Array<[FeedId, FeedId]>>) {
      const batch = { id: 'b-1', time: '2026-01-01T00:00:00.000Z', follows };
      expect(followBatchBytes(batch)).toBe(JSON.stringify(batch).length);
      expect(batchEventBytes({ type: 'FeedsFollowed', data: batch })).toBe(followBatchBytes(batch));
    }
  });

  it('counts activities in UTF-8 bytes, not characters, with what sealing adds', () => {
    const activity = { id: 'a', feed: 'user:b' as const, actor: 'ü', verb: 'v', object: '😀', time: 't' };
    const data = { id: 'b', activities: [activity, activity] };
    const sealed = JSON.stringify({ actor: 'ü', object: '😀' });
    expect(batchEventBytes({ type: 'ActivitiesAdded', data })).toBe(Buffer.byteLength(JSON.stringify(data)) + 2 * (Math.ceil(Buffer.byteLength(sealed) / 3) + 96));
  });

  it('fits 10,000 follows between UUID feeds in one event, and refuses larger ones naming the field', () => {
    const follows = Array.from({ length: MAX_FOLLOWS_PER_REQUEST }, (_, i) => [`timeline:${uuid(i)}`, `user:${uuid(i + 1)}`] as [FeedId, FeedId]);
    const bytes = followBatchBytes({ id: uuid(0), time: '2026-01-01T00:00:00.000Z', follows });
    expect(bytes).toBeLessThanOrEqual(MAX_BATCH_BYTES);
    expect(() => assertBatchFits(bytes, follows.length, 'follows')).not.toThrow();
    expect(() => assertBatchFits(MAX_BATCH_BYTES + 1, 10, 'activities')).toThrow(
      expect.objectContaining({ code: 'payload_too_large', field: 'activities', message: expect.stringContaining('send fewer per request') }),
    );
  });
});
