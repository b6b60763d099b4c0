import { v7 as uuidv7 } from 'uuid';

/**
 * A new activity's id and the time it was received, the two halves of its sort key when the
 * client sends no `time` (`time` then `id`, see `sortKeyOf`).
 *
 * Ids are UUIDv7: they begin with the millisecond they were made in and, within one process,
 * each is above the one before, even in the same millisecond or when the clock steps back.
 * The received time is read from the id, so that it never steps back either. Together they
 * make a process's posts sort in the order they were received: a newer-than poller that saw
 * one post cannot miss a later one because a random id sorted it below (as random UUIDs in
 * one millisecond did), and the items of one bulk import keep the request's order.
 */
export function newActivityId(): string {
  return uuidv7();
}

/** The millisecond a {@link newActivityId} id was made in, as an ISO time. */
export function receivedAtOf(id: string): string {
  return new Date(parseInt(id.slice(0, 8) + id.slice(9, 13), 16)).toISOString();
}

/** A new id and its received time, for one activity posted alone. */
export function newActivityStamp(): { id: string; receivedAt: string } {
  const id = newActivityId();
  return { id, receivedAt: receivedAtOf(id) };
}
