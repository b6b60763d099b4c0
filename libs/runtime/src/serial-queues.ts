/**
 * Runs tasks one at a time per key, and tasks of different keys concurrently: commands on
 * one stream decide on the state the previous one left.
 */
export class SerialQueues {
  private readonly tails = new Map<string, Promise<unknown>>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    return this.runAll([key], task);
  }

  /**
   * Runs `task` once every task queued before it on any of `keys` has settled, and before any
   * queued after it on one of them: a command over many streams (an import) decides on the
   * state each of them was left in. It cannot deadlock: it waits only for tasks queued
   * earlier, never holds one key while waiting for another.
   */
  runAll<T>(keys: readonly string[], task: () => Promise<T>): Promise<T> {
    const unique = [...new Set(keys)];
    const earlier = unique.flatMap((key) => {
      const tail = this.tails.get(key);
      return tail ? [tail] : [];
    });
    const previous = earlier.length === 0 ? Promise.resolve() : earlier.length === 1 ? earlier[0]! : Promise.all(earlier);
    const result = previous.then(task, task);
    const tail = result.catch(() => undefined);
    for (const key of unique) this.tails.set(key, tail);
    void tail.then(() => {
      for (const key of unique) if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }
}
