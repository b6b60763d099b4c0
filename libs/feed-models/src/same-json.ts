/**
 * Equal JSON values, whatever objects carry them: `extra` comes from decoders that may
 * build objects with another prototype (or realm), which strict deep equality would tell
 * apart, and key order does not matter.
 */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) return Array.isArray(b) && a.length === b.length && a.every((value, index) => sameJson(value, b[index]));
  if (Array.isArray(b)) return false;
  const entriesOfA = Object.entries(a);
  const objectB = b as Record<string, unknown>;
  return entriesOfA.length === Object.keys(objectB).length && entriesOfA.every(([key, value]) => Object.hasOwn(objectB, key) && sameJson(value, objectB[key]));
}
