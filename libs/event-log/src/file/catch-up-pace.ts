/** The longest a subscription waits for the slowest before it reads on anyway. */
const MOST_WAIT_MS = 500;

/**
 * Keeps the subscriptions of one log that catch up with it together (a standalone's start:
 * content, graph and fan-out replaying from the beginning) within `lead` records of the
 * slowest of them, the records the log keeps decoded for subscribers behind. A subscription
 * that ran further ahead would decode records the slowest has yet to read, which the log
 * then drops and decodes (and opens) again for it; paced, each record is decoded once for
 * all of them. Catching up ends, for each subscription, at the head it began at: one that
 * follows the head, or replays beside others that do (a timeline rebuild), is never held.
 *
 * Nothing here waits on a reader for good: one held waits until another reads on or
 * stops, and at most {@link MOST_WAIT_MS}; when that runs out, it reads a lead's worth of
 * records unheld before it is paced again, so that a reader the slowest waits on (fan-out
 * asks content for what it applied) goes on at that pace at worst, never stopping.
 */
export class CatchUpPacing {
  private readonly waiting = new Set<() => void>();

  constructor(
    /** The lowest position a subscription of the log stands at. */
    private readonly slowest: () => number,
    /** How far ahead of the slowest a subscription catching up may read. */
    readonly lead: number,
    private readonly mostWaitMs = MOST_WAIT_MS,
  ) {}

  /** The pace of a subscription that begins now, with the log's head at `head`. */
  begin(head: number): CatchUpPace {
    return new CatchUpPace(this, head);
  }

  /** Another subscription read on, or stopped: the held ones look again. */
  moved(): void {
    // Asked at every read, catching up or not: nothing to copy when none waits.
    if (this.waiting.size === 0) return;
    for (const wake of [...this.waiting]) wake();
  }

  /** Records after `position` a subscription catching up may read now, at most `max`; 0 when it is `lead` ahead of the slowest. */
  room(position: number, max: number): number {
    return Math.max(0, Math.min(max, this.slowest() + this.lead - position));
  }

  /** Waits until another subscription moves, the signal aborts, or the most wait is over; resolves with whether it was over. */
  wait(signal: AbortSignal): Promise<boolean> {
    return new Promise((resolve) => {
      if (signal.aborted) return resolve(false);
      const done = (waitedOut: boolean) => {
        clearTimeout(timer);
        this.waiting.delete(wake);
        signal.removeEventListener('abort', wake);
        resolve(waitedOut);
      };
      const wake = () => done(false);
      const timer = setTimeout(() => done(true), this.mostWaitMs);
      this.waiting.add(wake);
      signal.addEventListener('abort', wake, { once: true });
    });
  }
}

/** One subscription's pace: see {@link CatchUpPacing}. */
export class CatchUpPace {
  /** Whether its last read was held back: what it waits for next is the others, not new records. */
  held = false;
  /** After a wait that ran out: it reads on unheld to here (a lead's worth), then is paced again. */
  private unheldUntil = -1;

  constructor(
    private readonly pacing: CatchUpPacing,
    /** Where its catching up ends: the head when it began. */
    private readonly end: number,
  ) {}

  /** How many records after `position` to read now: `max` once caught up (or after a wait ran out), fewer or none while ahead. */
  allowed(position: number, max: number): number {
    const allowed = position >= this.end || position < this.unheldUntil ? max : this.pacing.room(position, max);
    this.held = allowed === 0;
    if (!this.held) this.pacing.moved();
    return allowed;
  }

  /** Waits for the others after a read was held back. */
  async waitForOthers(position: number, signal: AbortSignal): Promise<void> {
    // The others did not move for the longest wait: one of them may wait on this one.
    if (await this.pacing.wait(signal)) this.unheldUntil = position + this.pacing.lead;
  }
}
