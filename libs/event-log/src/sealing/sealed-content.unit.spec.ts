import { batchEventBytes, type Activity } from '@feedmill/contracts';
import { newFeedKey, openEventData, sealEventData, sealedKeyRefs, SealedContentError } from './sealed-content.js';

const key = newFeedKey('user:bob');
const activity: Activity = {
  id: 'a1',
  feed: 'user:bob',
  actor: 'bob-secret',
  verb: 'post',
  object: 'photo-secret',
  time: '2026-01-01T00:00:00.000Z',
  foreignId: 'fid-secret',
  extra: { text: 'secret' },
  to: ['alerts:carol'],
  refs: ['topic:secret'],
};

describe('sealed content', () => {
  it('keeps routing fields in clear, seals what a user typed, and opens to the same activity, field order included', () => {
    const stored = sealEventData('ActivityAdded', { activity }, () => key);
    const text = JSON.stringify(stored);
    expect(text).not.toContain('secret');
    expect(stored).toEqual({ activity: { id: 'a1', feed: 'user:bob', verb: 'post', time: activity.time, to: ['alerts:carol'], sealed: expect.stringMatching(new RegExp(`^${key.id}:`)) } });
    expect(sealedKeyRefs('ActivityAdded', stored)).toEqual([{ feed: 'user:bob', id: key.id }]);
    const opened = openEventData('ActivityAdded', stored, () => key);
    expect(JSON.stringify(opened.data)).toBe(JSON.stringify({ activity }));
  });

  it('stores a batch of activities in no more bytes than the batch limit counts for it, and not many fewer', () => {
    const activities = [
      activity,
      { ...activity, id: 'a2', extra: { text: 'ü'.repeat(700), n: [1, 2, 3] }, refs: ['applicant:17'], foreignId: 'f-1' },
      { ...activity, id: 'a3', object: 'o', extra: undefined },
    ];
    for (let count = 1; count <= activities.length; count++) {
      const data = { id: 'batch-1', activities: activities.slice(0, count) };
      const stored = Buffer.byteLength(JSON.stringify(sealEventData('ActivitiesAdded', data, () => key)));
      const counted = batchEventBytes({ type: 'ActivitiesAdded', data });
      expect(stored).toBeLessThanOrEqual(counted);
      expect(counted - stored).toBeLessThanOrEqual(16 * count);
    }
  });

  it('reads a plain event written before sealing as it is', () => {
    expect(openEventData('ActivityAdded', { activity }, () => undefined)).toEqual({ type: 'ActivityAdded', data: { activity }, whole: true });
  });

  it('gives a tombstone where the key is gone, and drops only the erased items of a batch', () => {
    const other = newFeedKey('user:ann');
    const ann: Activity = { ...activity, id: 'a2', feed: 'user:ann' };
    const single = sealEventData('ActivityAdded', { activity }, () => key);
    expect(openEventData('ActivityAdded', single, () => undefined)).toEqual({ type: 'ContentErased', data: { of: 'ActivityAdded', feed: 'user:bob', ids: ['a1'] }, whole: false });
    const batch = sealEventData('ActivitiesAdded', { id: 'b', activities: [activity, ann] }, (feed) => (feed === 'user:bob' ? key : other));
    const opened = openEventData('ActivitiesAdded', batch, (ref) => (ref.id === other.id ? other : undefined));
    expect(opened).toEqual({ type: 'ActivitiesAdded', data: { id: 'b', activities: [ann] }, whole: false });
    const update = sealEventData('ActivityUpdated', { id: 'a1', feed: 'user:bob', time: 't', extra: { text: 'secret' } }, () => key);
    expect(JSON.stringify(update)).not.toContain('secret');
    expect(openEventData('ActivityUpdated', update, () => key).data).toEqual({ id: 'a1', feed: 'user:bob', time: 't', extra: { text: 'secret' } });
    expect(openEventData('ActivityUpdated', update, () => undefined).type).toBe('ContentErased');
  });

  it('refuses a box moved to another activity, or opened with another key', () => {
    const stored = sealEventData('ActivityAdded', { activity }, () => key) as { activity: { id: string } };
    expect(() => openEventData('ActivityAdded', { activity: { ...stored.activity, id: 'a9' } }, () => key)).toThrow(SealedContentError);
    expect(() => openEventData('ActivityAdded', stored, () => ({ ...newFeedKey('user:bob'), id: key.id }))).toThrow(SealedContentError);
  });

  it('opens a box sealed with AES-256-GCM, as boxes were before XChaCha20-Poly1305, and refuses it moved', () => {
    // Written by the AES-GCM sealing with this key: a box as logs written then hold it.
    const v1Key = { id: 'v1-fixture-key', feed: 'user:bob' as const, secret: Buffer.alloc(32, 7) };
    const stored = {
      activity: {
        id: 'a1',
        feed: 'user:bob',
        verb: 'post',
        time: '2026-01-01T00:00:00.000Z',
        sealed: 'v1-fixture-key.Lnw2TO29KfJ/oWcjfYVBEP9wKZnjDLTBZr7/Pz+qdzLdCbffHMLDfln2DiSD4pJFSSDO56zWwFdgnXiZCMClDMh6vIYlTSG2E+2n8qV+g4RCYbw+hsDx+DHLomI+abTtP3cvTqKUsUxQdA==',
      },
    };
    expect(sealedKeyRefs('ActivityAdded', stored)).toEqual([{ feed: 'user:bob', id: 'v1-fixture-key' }]);
    expect(openEventData('ActivityAdded', stored, () => v1Key)).toEqual({
      type: 'ActivityAdded',
      data: { activity: { id: 'a1', feed: 'user:bob', actor: 'bob', verb: 'post', object: 'photo:1', time: '2026-01-01T00:00:00.000Z', extra: { text: 'sealed before 2026-11-27' } } },
      whole: true,
    });
    expect(() => openEventData('ActivityAdded', { activity: { ...stored.activity, id: 'a2' } }, () => v1Key)).toThrow(SealedContentError);
  });

  it('makes every key anew, across refills of the random bytes it draws from', () => {
    const keys = Array.from({ length: 600 }, () => newFeedKey('user:x'));
    expect(new Set(keys.map((made) => made.id)).size).toBe(600);
    expect(new Set(keys.map((made) => made.secret.toString('hex'))).size).toBe(600);
    expect(keys.every((made) => made.id.length === 16 && made.secret.length === 32 && made.secret.some((byte) => byte !== 0))).toBe(true);
  });

  it('never seals two boxes alike, even of the same content', () => {
    const boxes = new Set(Array.from({ length: 2_000 }, () => (sealEventData('ActivityAdded', { activity }, () => key) as { activity: { sealed: string } }).activity.sealed));
    expect(boxes.size).toBe(2_000);
  });
});
