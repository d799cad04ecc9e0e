/**
 * A Map without V8's bound on the entries of one Map: past 2^24 (16,777,216) entries a `set` throws
 * `RangeError: Map maximum size exceeded` (V8's OrderedHashTable capacity), which a key index of
 * string keys reaches at about 16.8M rows. The entries spread over Maps of at most `shardSize` each;
 * a key lives in one of them. With one shard (every table below the bound) a call costs one Map
 * call and a length check; beyond, a lookup probes the shards in turn.
 *
 * Values may not be `undefined` (`get` answers it for a missing key, as the callers expect).
 */
const DEFAULT_SHARD_SIZE = 1 << 23;

export class LargeMap<K, V extends NonNullable<unknown> | null> {
  private shards: Map<K, V>[] = [new Map()];
  private count = 0;

  /** `shardSize`: entries a shard holds at most (below 2^24; small ones for tests). */
  constructor(private readonly shardSize = DEFAULT_SHARD_SIZE) {
    if (!Number.isSafeInteger(shardSize) || shardSize < 1 || shardSize >= 1 << 24) throw new RangeError(`LargeMap: shardSize must be a whole number from 1 to 2^24 - 1, found ${shardSize}`);
  }

  get size(): number {
    return this.count;
  }

  get(k: K): V | undefined {
    const shards = this.shards;
    if (shards.length === 1) return shards[0]!.get(k);
    for (const shard of shards) {
      const v = shard.get(k);
      if (v !== undefined) return v;
    }
    return undefined;
  }

  set(k: K, v: V): this {
    const shards = this.shards;
    if (shards.length === 1) {
      const only = shards[0]!;
      const before = only.size;
      if (before < this.shardSize || only.has(k)) {
        only.set(k, v);
        this.count += only.size - before;
        return this;
      }
    } else {
      for (const shard of shards) {
        if (shard.has(k)) {
          shard.set(k, v);
          return this;
        }
      }
    }
    this.roomy().set(k, v);
    this.count++;
    return this;
  }

  delete(k: K): boolean {
    const shards = this.shards;
    for (let i = 0; i < shards.length; i++) {
      const shard = shards[i]!;
      if (!shard.delete(k)) continue;
      this.count--;
      // an emptied shard goes (the last one stays): lookups probe no more shards than hold entries
      if (shard.size === 0 && shards.length > 1) shards.splice(i, 1);
      return true;
    }
    return false;
  }

  clear(): void {
    this.shards = [new Map()];
    this.count = 0;
  }

  *entries(): Generator<[K, V]> {
    for (const shard of this.shards) yield* shard;
  }

  *keys(): Generator<K> {
    for (const shard of this.shards) yield* shard.keys();
  }

  *values(): Generator<V> {
    for (const shard of this.shards) yield* shard.values();
  }

  [Symbol.iterator](): Generator<[K, V]> {
    return this.entries();
  }

  /** A shard with room for a new key: the last one, another that deletes emptied, or a new one. */
  private roomy(): Map<K, V> {
    const shards = this.shards;
    const last = shards[shards.length - 1]!;
    if (last.size < this.shardSize) return last;
    const other = shards.find((s) => s.size < this.shardSize);
    if (other) return other;
    const fresh = new Map<K, V>();
    shards.push(fresh);
    return fresh;
  }
}
