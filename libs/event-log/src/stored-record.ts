/** How both adapters store one event: short keys, because there is one per event. */
export interface StoredRecord {
  /** stream */
  s: string;
  /** revision in the stream */
  r: number;
  /** event type */
  t: string;
  /** data */
  d: unknown;
  /** metadata */
  m: Record<string, unknown>;
  /** recorded at (ISO time) */
  at: string;
}
