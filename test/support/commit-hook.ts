/**
 * A catalog that is another in everything but `commitTable`, which goes through a hook given the
 * real commit to call (or not): how tests lose races, lose responses, or arm failpoints around a
 * catalog commit without a second catalog implementation.
 */
import type { Catalog, LoadedTable } from '../../src/iceberg/metadata/catalog.js';

type CommitHook = (commit: () => Promise<LoadedTable>, ...args: Parameters<Catalog['commitTable']>) => Promise<LoadedTable>;

export function withCommitHook<C extends Catalog>(inner: C, hook: CommitHook): C {
  return new Proxy(inner, {
    get(target, prop, receiver) {
      if (prop !== 'commitTable') return Reflect.get(target, prop, receiver);
      return (...args: Parameters<Catalog['commitTable']>) => hook(() => target.commitTable(...args), ...args);
    },
  });
}
