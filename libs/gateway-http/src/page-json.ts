/**
 * `{ "items": [...], "next": ... }`, the body of every activity page, framed around items
 * already written as JSON (a `WrittenPage`'s `itemsJson`) and the page's cursor as the API gives it.
 */
export function activityPageJson(itemsJson: string, cursor: string | null): string {
  return `{"items":[${itemsJson}],"next":${cursor === null ? 'null' : JSON.stringify(cursor)}}`;
}
