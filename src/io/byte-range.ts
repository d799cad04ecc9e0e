/** Validation of `[start, end)` byte ranges shared by the FileIO implementations. */
import { FloeError } from '../util/errors.js';

export function checkByteRange(location: string, start: number, end: number): void {
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < 0 || end < start) {
    throw new FloeError('io', 'invalid-argument', `expected a byte range 0 <= start <= end for ${location}, found [${start}, ${end})`);
  }
}
