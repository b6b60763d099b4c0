/**
 * `{ "items": [...], "next": ..., "newest": ... }`, the body of every activity page, framed
 * around items already written as JSON (a `WrittenPage`'s `itemsJson`) and the page's
 * cursors as the API gives them.
 */
export function activityPageJson(itemsJson: string, cursor: string | null, newest: string | null): string {
  return `{"items":[${itemsJson}],"next":${jsonCursor(cursor)},"newest":${jsonCursor(newest)}}`;
}

/** A cursor is base64url text, which JSON takes as it is between quotes. */
function jsonCursor(cursor: string | null): string {
  return cursor === null ? 'null' : `"${cursor}"`;
}
