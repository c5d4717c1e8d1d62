/** Code longer than this is not kept by its text: keeping it would cost more memory than the work saves. */
export const MAX_CACHED_CODE_LENGTH = 16_384;

/**
 * A small least-recently-used map: `get` and `set` make a key the newest, and
 * a `set` past `capacity` drops the oldest. What the engines and
 * `prepareGuestCode` keep by code text (parses, compiled scripts,
 * code known to compile) is kept in one of these.
 */
export class LruCache<K, V> {
  private readonly map = new Map<K, V>();

  constructor(private readonly capacity: number) {}

  get(key: K): V | undefined {
    const value = this.map.get(key);
    if (value !== undefined) {
      this.map.delete(key);
      this.map.set(key, value);
    }
    return value;
  }

  set(key: K, value: V): void {
    this.map.delete(key);
    this.map.set(key, value);
    if (this.map.size > this.capacity) {
      const oldest = this.map.keys().next();
      if (!oldest.done) this.map.delete(oldest.value);
    }
  }

  clear(): void {
    this.map.clear();
  }

  get size(): number {
    return this.map.size;
  }
}
