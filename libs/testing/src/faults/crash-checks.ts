import { decodeFeedEvents, sortKeyOf, type FeedId } from '@feedmill/contracts';
import type { RecordedEvent } from '@feedmill/event-log';
import type { FeedClient } from '@feedmill/harness';
import { referenceTimelines } from '../reference-timelines.js';
import type { AcknowledgedWrites } from './acknowledged-writes.js';

/** What a check found wrong, one line each; empty when all is well. */
export type Findings = string[];

/**
 * Every acknowledged write is in the log, read apart from the server: each acknowledged
 * post is there (and gone when its removal was acknowledged), each edge stands as its last
 * acknowledged follow or unfollow left it, and no activity was added twice.
 */
export function checkAcknowledgedWrites(events: readonly RecordedEvent[], writes: AcknowledgedWrites): { findings: Findings; checked: number } {
  const findings: Findings = [];
  const reference = referenceTimelines(events);
  const present = new Set(reference.activities().map((a) => a.id));
  const added = new Map<string, number>();
  for (const { event } of decodeFeedEvents(events)) {
    if (event.type === 'ActivityAdded') added.set(event.data.activity.id, (added.get(event.data.activity.id) ?? 0) + 1);
  }
  let checked = 0;
  for (const [id, post] of writes.posts) {
    checked++;
    if (!added.has(id)) findings.push(`acknowledged post ${id} to ${post.feed} is not in the log`);
    if (post.removed === 'no' && !present.has(id)) findings.push(`acknowledged post ${id} was removed though no removal was sent`);
    if (post.removed === 'acknowledged' && present.has(id)) findings.push(`acknowledged removal of ${id} is not in the log`);
  }
  for (const [id, count] of added) if (count > 1) findings.push(`activity ${id} was added ${count} times`);
  for (const [key, edge] of writes.edges) {
    if (edge.unanswered) continue;
    checked++;
    const [reader, producer] = key.split('>') as [FeedId, FeedId];
    const following = reference.followed(reader).includes(producer);
    if (following !== edge.following) findings.push(`edge ${key}: the last acknowledged write left it ${edge.following ? 'followed' : 'not followed'}, the log says ${following ? 'followed' : 'not followed'}`);
  }
  return { findings, checked };
}

/**
 * Every timeline (and producer feed) the API serves, scrolled to its end, is the reference
 * computed from the log: the same activities in the same order, none twice.
 */
export async function checkTimelines(api: FeedClient, events: readonly RecordedEvent[], readers: readonly FeedId[], producers: readonly FeedId[], pageSize = 100): Promise<{ findings: Findings; entries: number }> {
  const findings: Findings = [];
  const reference = referenceTimelines(events);
  let entries = 0;
  const compare = (feed: FeedId, served: string[], expected: string[]) => {
    entries += served.length;
    if (new Set(served).size !== served.length) findings.push(`${feed} shows an activity twice`);
    if (served.join() !== expected.join()) {
      const missingRanks = expected.flatMap((id, rank) => (served.includes(id) ? [] : [rank]));
      const missing = missingRanks.length;
      const extra = served.filter((id) => !expected.includes(id)).length;
      const where = missing ? `, missing ranks ${missingRanks.slice(0, 8).join(' ')}${missing > 8 ? ' …' : ''} of the newest first` : '';
      findings.push(`${feed}: served ${served.length} entries, the log says ${expected.length} (${missing} missing, ${extra} not in the reference${missing + extra === 0 ? ', order differs' : ''}${where})`);
    }
  };
  // A few readers at a time: thousands of them are read in a cluster run.
  for (let from = 0; from < readers.length; from += 16) {
    await Promise.all(
      readers.slice(from, from + 16).map(async (reader) => compare(reader, (await api.readAll(reader, pageSize)).map((a) => a.id), reference.timelineOf(reader).map((a) => a.id))),
    );
  }
  for (const producer of producers) {
    const expected = reference
      .activities()
      .filter((a) => a.feed === producer)
      .sort((a, b) => (sortKeyOf(a) < sortKeyOf(b) ? 1 : -1))
      .map((a) => a.id);
    compare(producer, (await api.readAll(producer, pageSize)).map((a) => a.id), expected);
  }
  return { findings, entries };
}
