import type { z } from 'zod';

/** An event as every log adapter stores it: its type, its data, and its schema version. */
export interface EncodedEvent {
  type: string;
  data: unknown;
  metadata: { v: number };
}

/** What a reader of the log hands the codec: the metadata of a record is whatever the log kept. */
export interface StoredEvent {
  type: string;
  data: unknown;
  metadata?: Record<string, unknown>;
  /**
   * The log vouches that this is what was appended, unchanged: events are checked before
   * they are encoded, so the data of one of today's version is not checked again (on a
   * replay of millions of events, that check would cost more than all the rest).
   * @defaultValue false
   */
  trusted?: boolean;
}

/**
 * One event type: the schema of its data today, and how to lift the data of each older
 * version by one. `upcasters[n]` turns version n into n + 1; the current version is one more
 * than the highest upcaster (1 when there is none).
 */
export interface EventDefinition<TData> {
  schema: z.ZodType<TData>;
  upcasters?: Record<number, (data: unknown) => unknown>;
}

type EventsOf<TDefinitions extends Record<string, EventDefinition<unknown>>> = {
  [K in keyof TDefinitions & string]: { type: K; data: TDefinitions[K] extends EventDefinition<infer D> ? D : never };
}[keyof TDefinitions & string];

export class UnknownEventVersionError extends Error {
  override readonly name = 'UnknownEventVersionError';
  constructor(
    readonly type: string,
    readonly version: number,
  ) {
    super(`event ${type} has schema version ${version}, newer than this build knows`);
  }
}

/** A stored event that does not have the shape its type and version promise. */
export class MalformedEventError extends Error {
  override readonly name = 'MalformedEventError';
  constructor(
    readonly type: string,
    readonly problem: string,
  ) {
    super(`stored ${type} event is malformed: ${problem}`);
  }
}

export interface EventCodec<TEvent extends { type: string; data: unknown }> {
  /** The version written today for each type. */
  readonly versions: Readonly<Record<TEvent['type'], number>>;
  /** Whether this codec reads events of `type`: a cheap check before any decoding. */
  knows(type: string): boolean;
  encode(event: TEvent): EncodedEvent;
  /**
   * Today's shape of a stored event, lifted from its version and checked against the schema
   * (unless it is trusted and of today's version). Undefined for a type this codec does not
   * read, so that newer writers can add events without breaking older readers; throws for a
   * version newer than this build or for malformed data, so that a projection stops rather
   * than silently differing from the log.
   */
  decode(stored: StoredEvent): TEvent | undefined;
}

/** The one place where events are written with their version and read back in today's shape. */
export function eventCodec<TDefinitions extends Record<string, EventDefinition<unknown>>>(definitions: TDefinitions): EventCodec<EventsOf<TDefinitions>> {
  type TEvent = EventsOf<TDefinitions>;
  const versions = Object.fromEntries(
    Object.entries(definitions).map(([type, definition]) => [type, 1 + Math.max(0, ...Object.keys(definition.upcasters ?? {}).map(Number))]),
  ) as Record<TEvent['type'], number>;
  const knows = (type: string) => Object.hasOwn(definitions, type);
  return {
    versions,
    knows,
    encode: (event) => ({ type: event.type, data: event.data, metadata: { v: versions[event.type as TEvent['type']] } }),
    decode(stored) {
      if (!knows(stored.type)) return undefined;
      const definition = definitions[stored.type]!;
      const current = versions[stored.type as TEvent['type']];
      const version = versionOf(stored);
      if (version === undefined) throw new MalformedEventError(stored.type, `metadata.v is not a version: ${String(stored.metadata?.['v'])}`);
      if (version > current) throw new UnknownEventVersionError(stored.type, version);
      if (version === current && stored.trusted === true) return { type: stored.type, data: stored.data } as TEvent;
      let data = stored.data;
      for (let from = version; from < current; from++) {
        const upcast = definition.upcasters?.[from];
        if (!upcast) throw new MalformedEventError(stored.type, `no upcaster from version ${from}`);
        data = upcast(data);
      }
      const parsed = definition.schema.safeParse(data);
      if (!parsed.success) throw new MalformedEventError(stored.type, parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
      return { type: stored.type, data: parsed.data } as TEvent;
    },
  };
}

/** Events written before versions were recorded are version 1; anything else but a version is malformed. */
function versionOf(stored: StoredEvent): number | undefined {
  const version = stored.metadata?.['v'];
  if (version === undefined) return 1;
  return typeof version === 'number' && Number.isInteger(version) && version >= 1 ? version : undefined;
}
