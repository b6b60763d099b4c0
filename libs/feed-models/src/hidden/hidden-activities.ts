import type { HiddenEntry, HiddenPage } from '@feedmill/contracts';

/** One hidden activity: when it was hidden, and the log position of that hiding (its place in the list). */
export interface HiddenMark {
  time: string;
  position: number;
}

/**
 * The activities one reader hid from its timeline, kept in the order of their hidings' log
 * positions: a page of newest first walks it backwards, and a position is a cursor that stays
 * right when ids are shown again in between. Hidings mostly arrive in log order and are
 * appended; one that does not (a dead letter replayed) is put in its place. Hiding an id already hidden keeps the first hiding, so that
 * a hiding applied twice (or made twice) is one entry.
 */
export class HiddenActivities {
  private marks = new Map<string, HiddenMark>();
  /** The highest position held: a hiding above it is appended, one below it put in its place. */
  private highest = -Infinity;

  get size(): number {
    return this.marks.size;
  }

  has(id: string): boolean {
    return this.marks.has(id);
  }

  /** Hides `id` as of the hiding at `position`; false when it was hidden already. */
  hide(id: string, time: string, position: number): boolean {
    if (this.marks.has(id)) return false;
    if (position >= this.highest) {
      this.marks.set(id, { time, position });
      this.highest = position;
      return true;
    }
    const ordered = [...this.marks];
    const at = ordered.findIndex(([, mark]) => mark.position > position);
    ordered.splice(at === -1 ? ordered.length : at, 0, [id, { time, position }]);
    this.marks = new Map(ordered);
    return true;
  }

  /** Shows `id` again; false when it was not hidden. */
  show(id: string): boolean {
    return this.marks.delete(id);
  }

  /** Every hidden id with its hiding, oldest hiding first (as a snapshot keeps them). */
  entries(): IterableIterator<[string, HiddenMark]> {
    return this.marks.entries();
  }

  /** Up to `limit` hidden ids, newest hiding first, of those hidden before the hiding at `after`. */
  page(after: number | undefined, limit: number): HiddenPage {
    const all = [...this.marks];
    const items: HiddenEntry[] = [];
    let last = 0;
    for (let at = all.length - 1; at >= 0 && items.length < limit; at--) {
      const [id, { time, position }] = all[at]!;
      if (after !== undefined && position >= after) continue;
      items.push({ id, time });
      last = position;
    }
    const more = items.length === limit && all.some(([, mark]) => mark.position < last);
    return { items, next: more ? last : null };
  }
}
