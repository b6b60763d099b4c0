import { FeedmillError } from '@feedmill/contracts';

/**
 * The last log position a projection has applied, and a way to wait for a later one: a
 * query that says "at least position P" sees every event up to P.
 */
export class ProjectionPosition {
  private current = 0;
  private readonly waiters: Array<{ position: number; resolve: () => void }> = [];

  get value(): number {
    return this.current;
  }

  advanceTo(position: number): void {
    if (position <= this.current) return;
    this.current = position;
    for (let i = this.waiters.length - 1; i >= 0; i--) {
      const waiter = this.waiters[i]!;
      if (waiter.position <= position) {
        this.waiters.splice(i, 1);
        waiter.resolve();
      }
    }
  }

  async reach(position: number | undefined, timeoutMs = 10_000): Promise<void> {
    if (position === undefined || position <= this.current) return;
    await new Promise<void>((resolve, reject) => {
      const waiter = {
        position,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      };
      const timer = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        reject(new FeedmillError('unavailable', `projection at ${this.current} did not reach position ${position} in ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiters.push(waiter);
    });
  }
}
