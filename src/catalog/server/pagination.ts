/**
 * List pagination of `floe catalog serve` (spec `PageToken`): without `pageToken` every item comes in
 * one response; with it (an empty value starts), `pageSize` items per page and an opaque
 * `next-page-token` (the offset, base64url) until the last page, which carries null. The listing is
 * re-read per page, so concurrent creates and drops may shift items between pages, as with any
 * offset-based pagination.
 */
import { badRequest } from './error-response.js';

export interface Page<T> {
  items: T[];
  next: string | null;
}

export function paginate<T>(all: readonly T[], query: URLSearchParams): Page<T> {
  const token = query.get('pageToken');
  const sizeText = query.get('pageSize');
  if (token === null || sizeText === null) return { items: [...all], next: null };
  const size = Number(sizeText);
  if (!Number.isInteger(size) || size < 1) throw badRequest(`pageSize must be a positive integer, found ${JSON.stringify(sizeText)}`);
  let offset = 0;
  if (token !== '') {
    offset = Number(Buffer.from(token, 'base64url').toString('utf8'));
    if (!Number.isInteger(offset) || offset < 0) throw badRequest(`invalid pageToken ${JSON.stringify(token)}; start again without it`);
  }
  const items = all.slice(offset, offset + size);
  const nextOffset = offset + items.length;
  return { items, next: nextOffset < all.length ? Buffer.from(String(nextOffset), 'utf8').toString('base64url') : null };
}
