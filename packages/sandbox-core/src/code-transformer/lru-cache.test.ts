import { describe, expect, it } from "vitest";
import { LruCache } from "./lru-cache.js";

describe("LruCache", () => {
  it("drops the least recently used key past its capacity; get and set make a key the newest", () => {
    const cache = new LruCache<string, number>(2);
    cache.set("a", 1);
    cache.set("b", 2);
    expect(cache.get("a")).toBe(1); // a is now newer than b
    cache.set("c", 3); // drops b
    cache.set("a", 4); // replaces a, newest again
    cache.set("d", 5); // drops c
    expect({
      a: cache.get("a"),
      b: cache.get("b"),
      c: cache.get("c"),
      d: cache.get("d"),
      size: cache.size,
    }).toEqual({ a: 4, b: undefined, c: undefined, d: 5, size: 2 });
    cache.clear();
    expect(cache.size).toBe(0);
  });
});
