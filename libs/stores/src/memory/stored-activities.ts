import { relevanceKeyOf, sortKeyOf, type Activity, type SortKey } from '@feedmill/contracts';
import { IdIndex, NOT_INDEXED } from '@feedmill/feed-models';

/**
 * An activity as the content store holds it, with the log position that added it. Its
 * keys are made when first compared: a store restored from a snapshot makes none for the
 * millions of activities no read or change reaches.
 */
export class StoredActivity {
  /** Its place among the stored activities ({@link ActivitiesById}). */
  slot = -1;
  private timeKey?: SortKey;
  private relevanceKey?: SortKey;

  constructor(
    public activity: Activity,
    readonly position: number,
  ) {}

  get key(): SortKey {
    return (this.timeKey ??= sortKeyOf(this.activity));
  }

  /** The relevance key: the key raised to the last bump. */
  get relevance(): SortKey {
    return (this.relevanceKey ??= relevanceKeyOf(this.activity));
  }

  /** Takes a new version of the activity (a bump, an update): its key stays, its relevance follows it. */
  replace(activity: Activity): void {
    this.activity = activity;
    this.relevanceKey = undefined;
  }
}

/** Stored activities by id: an {@link IdIndex} of their places in one array. */
export class ActivitiesById {
  private readonly slotsInUse: Array<StoredActivity | undefined> = [];
  private readonly freeSlots: number[] = [];
  private readonly index = new IdIndex((slot) => this.slotsInUse[slot]!.activity.id);

  get size(): number {
    return this.index.size;
  }

  /** One more than the highest slot in use: a bound for arrays indexed by slot. */
  get slots(): number {
    return this.slotsInUse.length;
  }

  get(id: string): StoredActivity | undefined {
    const slot = this.index.get(id);
    return slot === NOT_INDEXED ? undefined : this.slotsInUse[slot];
  }

  /** Adds an activity whose id it does not hold. */
  add(stored: StoredActivity): void {
    stored.slot = this.freeSlots.length > 0 ? this.freeSlots.pop()! : this.slotsInUse.length;
    this.slotsInUse[stored.slot] = stored;
    this.index.set(stored.activity.id, stored.slot);
  }

  delete(stored: StoredActivity): void {
    this.index.delete(stored.activity.id);
    this.slotsInUse[stored.slot] = undefined;
    this.freeSlots.push(stored.slot);
    stored.slot = -1;
  }
}
