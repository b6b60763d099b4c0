import type { WrittenPage } from '@feedmill/transport';

/** `{ "items": [...], "next": ... }`, the body of every activity page, framed around items already written. */
export function activityPageJson(page: WrittenPage, next: string | null): string {
  return `{"items":[${page.itemsJson}],"next":${next === null ? 'null' : JSON.stringify(next)}}`;
}
