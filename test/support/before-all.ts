/**
 * A resource the tests of a file (or of a describe block) share: made in `beforeAll`, disposed of in
 * `afterAll`, read through the returned function inside tests and hooks (reading it earlier, while
 * vitest collects the tests, throws).
 */
import { afterAll, beforeAll } from 'vitest';

export function madeBeforeAll<T>(what: string, make: () => T | Promise<T>, dispose: (value: T) => unknown): () => T {
  let made: { value: T } | undefined;
  beforeAll(async () => {
    made = { value: await make() };
  });
  afterAll(async () => {
    if (made) await dispose(made.value);
  });
  return () => {
    if (!made) throw new Error(`${what} is made in beforeAll: read it inside a test or a hook`);
    return made.value;
  };
}
