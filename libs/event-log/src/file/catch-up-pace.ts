/**
 * The longest a subscription is held back in a row, however often the others wake it: longer
 * than the slowest's longest batch (fan-out's 8,192 events take about half a second on a
 * loaded 2-core machine).
 */
const MOST_HELD_MS = 2_000;

/**
 * Keeps the subscriptions of one log that catch up with it together (a standalone's start:
 * content, graph and fan-out replaying from the beginning, each subscribed with
 * `catchUpTogether`) within `lead` records of the slowest of them, the records the log keeps
 * decoded for subscribers behind. A subscription that ran further ahead would decode records
 * the slowest has yet to read, which the log then drops and decodes (and opens) again for
 * it; paced, each record is decoded once for all of them.
 *
 * Only a subscription that reads up to that limit is held there. One more than a lead past it
 * (content restored from a snapshot near the head while fan-out replays from the start) is
 * not: the slowest would not reach what it reads while the log keeps it decoded, so holding
 * it would only delay it. Catching up ends, for each subscription, at the head it began at:
 * past it, following the head, none is held.
 *
 * Nothing here waits on a reader for good: one held for {@link MOST_HELD_MS} in a row reads a
 * lead's worth of records unheld, which takes it past the reach of pacing, so that a reader
 * the slowest waits on goes on after that wait at worst.
 */
export class CatchUpPacing {
  private readonly waiting = new Set<() => void>();

  constructor(
    /** The lowest position a subscription catching up together stands at. */
    private readonly slowest: () => number,
    /** How far ahead of the slowest a subscription catching up may read. */
    readonly lead: number,
    readonly mostHeldMs = MOST_HELD_MS,
  ) {}

  /** The pace of a subscription that begins now, with the log's head at `head`. */
  begin(head: number): CatchUpPace {
    return new CatchUpPace(this, head);
  }

  /** A subscription is about to read on (its position moved), or stopped: the held ones look again. */
  moved(): void {
    // Asked at every read, catching up or not: nothing to copy when none waits.
    if (this.waiting.size === 0) return;
    for (const wake of [...this.waiting]) wake();
  }

  /**
   * Records after `position` a subscription catching up may read now, at most `max`: 0 when
   * it is a lead ahead of the slowest, but not two leads or more (beyond reach).
   */
  room(position: number, max: number): number {
    const ahead = position - this.slowest();
    if (ahead >= 2 * this.lead) return max;
    return Math.max(0, Math.min(max, this.lead - ahead));
  }

  /** Waits until a subscription moves, the signal aborts, or `ms` pass; resolves with whether they passed. */
  wait(ms: number, signal: AbortSignal): Promise<boolean> {
    return new Promise((resolve) => {
      if (signal.aborted) return resolve(false);
      const done = (ranOut: boolean) => {
        clearTimeout(timer);
        this.waiting.delete(wake);
        signal.removeEventListener('abort', wake);
        resolve(ranOut);
      };
      const wake = () => done(false);
      const timer = setTimeout(() => done(true), ms);
      this.waiting.add(wake);
      signal.addEventListener('abort', wake, { once: true });
    });
  }
}

/** One subscription's pace: see {@link CatchUpPacing}. */
export class CatchUpPace {
  /** Whether its last read was held back: what it waits for next is the others, not new records. */
  held = false;
  /** When it was first held back in a row of reads held back. */
  private heldSince = 0;
  /** After it was held the longest: it reads on unheld to here (a lead's worth). */
  private unheldUntil = -1;

  constructor(
    private readonly pacing: CatchUpPacing,
    /** Where its catching up ends: the head when it began. */
    private readonly end: number,
  ) {}

  /** How many records after `position` to read now: `max` once caught up (or after it was held the longest), fewer or none while ahead. */
  allowed(position: number, max: number): number {
    const allowed = position >= this.end || position < this.unheldUntil ? max : this.pacing.room(position, max);
    if (allowed > 0) {
      this.held = false;
      this.pacing.moved();
    } else if (!this.held) {
      this.held = true;
      this.heldSince = performance.now();
    }
    return allowed;
  }

  /** Waits for the others after a read was held back: until one moves, or it has been held the longest. */
  async waitForOthers(position: number, signal: AbortSignal): Promise<void> {
    const left = this.heldSince + this.pacing.mostHeldMs - performance.now();
    // Held the longest: one of the others may be waiting on this one.
    if (left <= 0 || (await this.pacing.wait(left, signal))) this.unheldUntil = position + this.pacing.lead;
  }
}
