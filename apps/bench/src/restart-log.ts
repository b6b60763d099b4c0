import { randomUUID } from 'node:crypto';
import { feedEvents, followsImportStream, type FeedId } from '@feedmill/contracts';
import { FileEventLog, openSealedFileLog, type EventLog } from '@feedmill/event-log';
import { decideActivity, decideFollowMany, streamOf } from '@feedmill/feed-models';
import { importBatches, type Workload } from './workload.js';

/** Appends in flight while writing: they share the log's group commits. */
const APPENDS_IN_FLIGHT = 2_000;
const START_MS = Date.UTC(2026, 0, 1);

export interface WrittenLog {
  /** Events in the log when done. */
  head: number;
  followImports: number;
  posts: number;
}

/**
 * Writes a workload's graph and posts into the file log in `dir` as the API records them: the
 * follows as bulk imports of 10,000 (one `FeedsFollowed` each), then single posts drawn as the
 * benchmark draws them, until the log holds `events` events. Posts are decided by the same
 * function as content's, and sealed with their feeds' keys as the standalone seals them, so
 * that each record is the size and shape a real one is and a replay opens every one. With
 * `sealed` false, content is written in clear, as logs before sealing hold it (a standalone
 * reads those as they are): the same log without a box to open, to measure what sealing costs.
 */
export async function writeWorkloadLog(dir: string, workload: Workload, events: number, progress: (head: number) => void, sealed = true): Promise<WrittenLog> {
  const log: EventLog = sealed ? await openSealedFileLog({ dir }) : await FileEventLog.open({ dir });
  try {
    let followImports = 0;
    for (const edges of importBatches(workload.edges)) {
      const follows = edges.map(([reader, producer]): [FeedId, FeedId] => [workload.readers[reader] as FeedId, workload.producers[producer] as FeedId]);
      const id = randomUUID();
      for (const event of decideFollowMany({ type: 'FollowMany', data: { id, time: new Date(START_MS).toISOString(), follows } }, new Array<boolean>(follows.length).fill(false))) {
        await log.appendToStream(followsImportStream(id), [feedEvents.encode(event)]);
        followImports++;
      }
    }
    const posts = await appendPosts(log, workload, events - (await log.headPosition()), progress);
    return { head: await log.headPosition(), followImports, posts };
  } finally {
    await log.close();
  }
}

/** Appends `count` more posts to the log in `dir` (a tail after snapshots were written). */
export async function appendWorkloadPosts(dir: string, workload: Workload, count: number): Promise<number> {
  const log = await openSealedFileLog({ dir });
  try {
    await appendPosts(log, workload, count, () => undefined);
    return await log.headPosition();
  } finally {
    await log.close();
  }
}

async function appendPosts(log: EventLog, workload: Workload, count: number, progress: (head: number) => void): Promise<number> {
  const head = await log.headPosition();
  for (let from = 0; from < count; from += APPENDS_IN_FLIGHT) {
    const appends: Promise<unknown>[] = [];
    for (let n = from; n < Math.min(count, from + APPENDS_IN_FLIGHT); n++) {
      const producer = workload.nextPoster();
      const feed = workload.producers[producer] as FeedId;
      const receivedAt = new Date(START_MS + (head + n) * 10).toISOString();
      const activity = { actor: `p${producer}`, verb: 'post', object: `object:${Math.floor(workload.chance() * 1e9)}` };
      const [added] = decideActivity({ type: 'AddActivity', data: { feed, activity, id: randomUUID(), receivedAt } }, undefined);
      appends.push(log.appendToStream(streamOf(added!), [feedEvents.encode(added!)]));
    }
    await Promise.all(appends);
    progress(head + from + appends.length);
  }
  return count;
}
