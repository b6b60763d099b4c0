/**
 * What the timeline service did for a run, whatever the model: entries its store wrote
 * (fan-out deliveries, follow backfills, cache builds) and feeds its pull paths queried at
 * read time, summed over reads. Pushing pays the first at post time, pulling the second at
 * read time; their sum compares the models.
 */
export interface TimelineWork {
  entriesWritten: number;
  feedsQueried: number;
}

export const noWork: TimelineWork = { entriesWritten: 0, feedsQueried: 0 };

export function totalWork(work: TimelineWork): number {
  return work.entriesWritten + work.feedsQueried;
}

/** The work done between two readings of the service's counters, which count since it started. */
export function workBetween(before: TimelineWork, after: TimelineWork): TimelineWork {
  return { entriesWritten: after.entriesWritten - before.entriesWritten, feedsQueried: after.feedsQueried - before.feedsQueried };
}

export function addWork(a: TimelineWork, b: TimelineWork): TimelineWork {
  return { entriesWritten: a.entriesWritten + b.entriesWritten, feedsQueried: a.feedsQueried + b.feedsQueried };
}

/** A run's work by phase: loading the graph and the posts before the mixed phase, the mixed phase, and both. */
export interface WorkByPhase {
  beforeMixed: TimelineWork;
  mixed: TimelineWork;
  total: TimelineWork;
}

export function workByPhase(beforeMixed: TimelineWork, mixed: TimelineWork): WorkByPhase {
  return { beforeMixed, mixed, total: addWork(beforeMixed, mixed) };
}
