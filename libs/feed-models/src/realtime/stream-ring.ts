/** A numbered event of one feed's stream. */
export interface NumberedEvent<Event> {
  /** `<epoch>-<seq>`: the epoch names this ring, so that an id from another one (an earlier life of the feed's watch, another process) is never mistaken for one of its own. */
  id: string;
  seq: number;
  event: Event;
}

/**
 * The recent events of one feed's stream, numbered, for `Last-Event-ID` resumes: a client
 * that reconnects after an event still kept here gets every event after it; one that
 * resumes from an older event, or from an id of another ring, must start over (a reset).
 */
export class StreamRing<Event> {
  private readonly events: NumberedEvent<Event>[] = [];
  private seq = 0;

  /**
   * @param epoch - unique to this ring (a random string): ids of earlier rings of the same feed never match
   * @param capacity - how many of the newest events are kept for resumes
   */
  constructor(
    readonly epoch: string,
    private readonly capacity: number,
  ) {}

  /** The id of the newest event, or of the ring's start when it has none: a resume from it misses nothing after now. */
  get lastId(): string {
    return `${this.epoch}-${this.seq}`;
  }

  /** Numbers the event `make` builds with its id, and keeps it, dropping the oldest one past the capacity. */
  append(make: (id: string) => Event): NumberedEvent<Event> {
    const id = `${this.epoch}-${++this.seq}`;
    const numbered = { id, seq: this.seq, event: make(id) };
    this.events.push(numbered);
    if (this.events.length > this.capacity) this.events.shift();
    return numbered;
  }

  /** The sequence number an id of this ring carries, or undefined for an id of another ring or none at all. */
  seqOf(id: string): number | undefined {
    const dash = id.lastIndexOf('-');
    if (dash <= 0 || id.slice(0, dash) !== this.epoch) return undefined;
    const seq = Number(id.slice(dash + 1));
    return Number.isInteger(seq) && seq >= 0 && seq <= this.seq ? seq : undefined;
  }

  /** The events after `lastId`, oldest first; undefined when it is not this ring's or some of those events are no longer kept. */
  after(lastId: string): NumberedEvent<Event>[] | undefined {
    const seq = this.seqOf(lastId);
    if (seq === undefined) return undefined;
    const oldestKept = this.events.length === 0 ? this.seq + 1 : this.events[0]!.seq;
    if (seq + 1 < oldestKept) return undefined;
    return this.events.filter((event) => event.seq > seq);
  }
}
