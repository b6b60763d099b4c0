import { randomUUID } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { activityStream, type FeedId } from '@feedmill/contracts';
import type { EventLog } from '@feedmill/event-log';
import type { FeedClient } from '@feedmill/harness';

/** Feed groups the proof runs on: a producer group, a timeline group, and a notification-like group that takes `to`. */
export const ERASURE_FEED_CONFIG = {
  groups: {
    user: { kind: 'producer' },
    timeline: { kind: 'timeline', model: 'ring', cap: 50 },
    alerts: { kind: 'timeline', model: 'ring', cap: 50, acceptsTargets: true },
  },
};

/** What a user typed that must vanish: a unique word, and the byte patterns it would leave on disk. */
export class ErasureMarker {
  readonly text = `ERASEME${randomUUID().replaceAll('-', '')}`;

  /**
   * The marker's bytes as text, and its base64 at each of the three alignments it can have
   * inside a longer encoded string (the middle of each encoding, which does not depend on
   * the neighbouring bytes), in base64 and base64url.
   */
  patterns(): Buffer[] {
    const patterns = [Buffer.from(this.text)];
    for (let shift = 0; shift < 3; shift++) {
      const encoded = Buffer.from('\0'.repeat(shift) + this.text + '\0\0\0').toString('base64');
      const middle = encoded.slice(4, encoded.length - 8);
      patterns.push(Buffer.from(middle), Buffer.from(middle.replaceAll('+', '-').replaceAll('/', '_')));
    }
    return patterns;
  }

  /** Every file under `dir` (recursively) whose raw bytes hold the marker in any of its forms. */
  async filesHolding(dir: string): Promise<string[]> {
    const holding: string[] = [];
    const patterns = this.patterns();
    for (const file of await filesUnder(dir)) {
      let bytes: Buffer;
      try {
        bytes = await readFile(file);
      } catch {
        continue; // removed while walking (a temp file)
      }
      if (patterns.some((pattern) => bytes.includes(pattern))) holding.push(file);
    }
    return holding;
  }
}

async function filesUnder(dir: string): Promise<string[]> {
  const files: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...(await filesUnder(path)));
    else if (entry.isFile()) files.push(path);
  }
  return files;
}

/**
 * Posts carrying the marker in object, extra, refs and foreignId to `user:bob`, one of them
 * addressed to `alerts:carol`; `timeline:alice` follows `user:bob`, `timeline:bob` follows
 * `user:alice`, whose own post (without the marker) must outlive the erasure.
 */
export async function postMarkedActivities(api: FeedClient, marker: ErasureMarker): Promise<{ kept: string }> {
  expect((await api.follow('timeline:alice', 'user:bob')).status).toBe(204);
  expect((await api.follow('timeline:bob', 'user:alice')).status).toBe(204);
  for (let i = 0; i < 3; i++) {
    const posted = await api.post('user:bob', {
      actor: `bob-${marker.text}`,
      verb: 'post',
      object: `photo-${marker.text}-${i}`,
      foreignId: `fid-${marker.text}-${i}`,
      extra: { text: `hello ${marker.text}`, nested: { deep: [marker.text] } },
      refs: [`topic:${marker.text}`],
      ...(i === 0 && { to: ['alerts:carol'] }),
    });
    expect(posted.status).toBe(201);
  }
  const kept = await api.post('user:alice', { actor: 'alice', verb: 'post', object: 'kept' });
  expect(kept.status).toBe(201);
  return { kept: (kept.body as { id: string }).id };
}

/** Every answer of the API about the feeds involved, as JSON text: what must not hold the marker once erased. */
export async function apiAnswers(api: FeedClient, marker: ErasureMarker): Promise<Record<string, unknown>> {
  const paths = [
    '/v1/feeds/timeline/alice?limit=100',
    '/v1/feeds/timeline/bob?limit=100',
    '/v1/feeds/alerts/carol?limit=100',
    '/v1/feeds/user/bob?limit=100',
    '/v1/feeds/user/alice?limit=100',
    `/v1/refs/topic:${marker.text}/activities?limit=100`,
    '/v1/feeds/user/bob/followers',
    '/v1/feeds/timeline/bob/following',
    '/v1/feeds/user/alice/followers',
    '/v1/feeds/user/bob/counts',
    '/v1/feeds/timeline/bob/counts',
  ];
  const answers: Record<string, unknown> = {};
  for (const path of paths) {
    const { status, body } = await api.call('GET', path);
    answers[path] = { status, body };
  }
  return answers;
}

/**
 * What the log itself holds of an erased feed, read with its keys: its activities' records
 * (each a `ContentErased` tombstone once its keys are destroyed, the `ActivityAdded` it was
 * otherwise) and the key ids its erasures named, for the caller to look for in its key
 * store. The files hold no marker either way (the log is sealed): only this shows the keys
 * were destroyed.
 */
export async function erasedFeedInLog(log: EventLog, feed: FeedId): Promise<{ activities: Array<{ type: string; data: unknown }>; keyIds: string[] }> {
  const records = await log.readStream(activityStream(feed));
  const activities = records.filter((record) => record.type !== 'FeedErased').map(({ type, data }) => ({ type, data }));
  const keyIds = records.filter((record) => record.type === 'FeedErased').flatMap((record) => (record.data as { keys?: string[] }).keys ?? []);
  return { activities, keyIds };
}
