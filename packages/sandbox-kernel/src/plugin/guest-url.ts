import type { GuestKit } from "./guest-kit.js";

/**
 * GUEST REALM. `URL` and `URLSearchParams` as guest-realm classes. Parsing and serialising are
 * delegated to the host's WHATWG implementation through primitive-only bridge calls
 * (`url.parse`, `url.set`, `usp.parse`, `usp.serialize`); the objects plugins hold are guest
 * objects whose state is plain strings.
 */
export function installGuestUrl(kit: GuestKit): void {
  interface Parts {
    href: string;
    origin: string;
    protocol: string;
    username: string;
    password: string;
    host: string;
    hostname: string;
    port: string;
    pathname: string;
    search: string;
    hash: string;
  }
  type Pairs = [string, string][];
  const define = Object.defineProperty;
  const urlParts = new WeakMap<object, Parts>();
  const paramsOfUrl = new WeakMap<object, URLSearchParams>();
  const paramsState = new WeakMap<object, { list: Pairs; url: object | undefined }>();

  const parse = (input: string, base?: string): Parts | null =>
    kit.call("url.parse", input, base) as Parts | null;
  const parseQuery = (query: string): Pairs => kit.call("usp.parse", query) as Pairs;
  const serialize = (list: Pairs): string => kit.call("usp.serialize", JSON.stringify(list)) as string;
  const partsOf = (url: object): Parts => {
    const parts = urlParts.get(url);
    if (parts === undefined) throw new TypeError("Illegal invocation: not a URL");
    return parts;
  };
  const stateOf = (params: object) => {
    const state = paramsState.get(params);
    if (state === undefined) throw new TypeError("Illegal invocation: not a URLSearchParams");
    return state;
  };
  /** After a URL changes, refresh its linked search params from the new query. */
  const syncParams = (url: object) => {
    const params = paramsOfUrl.get(url);
    if (params !== undefined) stateOf(params).list = parseQuery(partsOf(url).search);
  };
  /** After search params change, write the query back into the linked URL. */
  const syncUrl = (params: object) => {
    const state = stateOf(params);
    if (state.url === undefined) return;
    const query = serialize(state.list);
    const parts = kit.call("url.set", partsOf(state.url).href, JSON.stringify(["search", query])) as Parts;
    urlParts.set(state.url, parts);
  };

  class URLSearchParams {
    constructor(init: unknown = "") {
      let list: Pairs = [];
      if (typeof init === "object" && init !== null) {
        if (paramsState.has(init)) list = stateOf(init).list.map(([k, v]) => [k, v]);
        else if (typeof (init as { [Symbol.iterator]?: unknown })[Symbol.iterator] === "function") {
          for (const pair of init as Iterable<unknown>) {
            const items = Array.from(pair as Iterable<unknown>);
            if (items.length !== 2)
              throw new TypeError("Each query pair must be an iterable [name, value] tuple");
            list.push([String(items[0]), String(items[1])]);
          }
        } else {
          for (const key of Object.keys(init))
            list.push([key, String((init as Record<string, unknown>)[key])]);
        }
      } else {
        const text = String(init);
        list = parseQuery(text.startsWith("?") ? text.slice(1) : text);
      }
      paramsState.set(this, { list, url: undefined });
    }
    get size(): number {
      return stateOf(this).list.length;
    }
    append(name: string, value: string): void {
      stateOf(this).list.push([String(name), String(value)]);
      syncUrl(this);
    }
    delete(name: string, value?: string): void {
      const state = stateOf(this);
      const n = String(name);
      state.list = state.list.filter(([k, v]) => k !== n || (value !== undefined && v !== String(value)));
      syncUrl(this);
    }
    get(name: string): string | null {
      const n = String(name);
      const hit = stateOf(this).list.find(([k]) => k === n);
      return hit === undefined ? null : hit[1];
    }
    getAll(name: string): string[] {
      const n = String(name);
      return stateOf(this)
        .list.filter(([k]) => k === n)
        .map(([, v]) => v);
    }
    has(name: string, value?: string): boolean {
      const n = String(name);
      return stateOf(this).list.some(([k, v]) => k === n && (value === undefined || v === String(value)));
    }
    set(name: string, value: string): void {
      const state = stateOf(this);
      const n = String(name);
      const index = state.list.findIndex(([k]) => k === n);
      if (index === -1) state.list.push([n, String(value)]);
      else {
        state.list[index] = [n, String(value)];
        state.list = state.list.filter(([k], i) => k !== n || i === index);
      }
      syncUrl(this);
    }
    sort(): void {
      const state = stateOf(this);
      state.list = state.list
        .map((pair, index) => ({ pair, index }))
        .sort((a, b) => (a.pair[0] < b.pair[0] ? -1 : a.pair[0] > b.pair[0] ? 1 : a.index - b.index))
        .map(({ pair }) => pair);
      syncUrl(this);
    }
    forEach(
      callback: (value: string, name: string, params: URLSearchParams) => void,
      thisArg?: unknown,
    ): void {
      for (const [k, v] of stateOf(this).list.slice()) Reflect.apply(callback, thisArg, [v, k, this]);
    }
    *entries(): IterableIterator<[string, string]> {
      for (const [k, v] of stateOf(this).list.slice()) yield [k, v];
    }
    *keys(): IterableIterator<string> {
      for (const [k] of stateOf(this).list.slice()) yield k;
    }
    *values(): IterableIterator<string> {
      for (const [, v] of stateOf(this).list.slice()) yield v;
    }
    [Symbol.iterator](): IterableIterator<[string, string]> {
      return this.entries();
    }
    toString(): string {
      return serialize(stateOf(this).list);
    }
  }

  const setter = (prop: string) =>
    function (this: object, value: unknown) {
      const parts = kit.call("url.set", partsOf(this).href, JSON.stringify([prop, String(value)])) as Parts;
      urlParts.set(this, parts);
      syncParams(this);
    };

  class GuestURL {
    constructor(input: unknown, base?: unknown) {
      const parts = parse(String(input), base === undefined ? undefined : String(base));
      if (parts === null) throw new TypeError(`Invalid URL: ${String(input)}`);
      urlParts.set(this, parts);
    }
    static canParse(input: unknown, base?: unknown): boolean {
      return parse(String(input), base === undefined ? undefined : String(base)) !== null;
    }
    get origin(): string {
      return partsOf(this).origin;
    }
    get searchParams(): URLSearchParams {
      let params = paramsOfUrl.get(this);
      if (params === undefined) {
        params = new URLSearchParams(partsOf(this).search);
        stateOf(params).url = this;
        paramsOfUrl.set(this, params);
      }
      return params;
    }
    toString(): string {
      return partsOf(this).href;
    }
    toJSON(): string {
      return partsOf(this).href;
    }
  }
  for (const prop of [
    "href",
    "protocol",
    "username",
    "password",
    "host",
    "hostname",
    "port",
    "pathname",
    "search",
    "hash",
  ]) {
    define(GuestURL.prototype, prop, {
      get(this: object) {
        return (partsOf(this) as unknown as Record<string, string>)[prop];
      },
      set: setter(prop),
      enumerable: true,
      configurable: true,
    });
  }
  define(GuestURL, "name", { value: "URL" });
  kit.globals.URL = GuestURL;
  kit.globals.URLSearchParams = URLSearchParams;
}
