import { randomFillSync } from 'node:crypto';
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
  const random = randomBytes16();
  advance(Date.now(), random);
  return uuidv7({ random, msecs: last.msecs, seq: last.seq });
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

// uuid's own v7() keeps ids rising, but reads 16 random bytes from the system per id (a
// twentieth of a post's CPU); given options, it keeps no state. So the rising millisecond and
// sequence are kept here, as uuid keeps them, and random bytes are drawn 4 KiB at a time.
const last = { msecs: -Infinity, seq: 0 };
const pool = new Uint8Array(4096);
let poolAt = pool.length;

function randomBytes16(): Uint8Array {
  if (poolAt + 16 > pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  return pool.subarray(poolAt, (poolAt += 16));
}

/** A new millisecond starts the sequence at a random 31-bit value; within one (or when the clock steps back) it counts up, overflowing into the next millisecond. */
function advance(now: number, random: Uint8Array): void {
  if (now > last.msecs) {
    last.msecs = now;
    last.seq = ((random[6]! & 0x7f) << 24) | (random[7]! << 16) | (random[8]! << 8) | random[9]!;
    return;
  }
  last.seq = (last.seq + 1) | 0;
  if (last.seq === 0) last.msecs++;
}
