import type { CrossingError, GuestKit, ToolCrossingError } from "./guest-kit.js";

/**
 * GUEST REALM. Capability stubs installed as globals `fs` and `fetch` (when configured). Each call
 * is encoded and sent to the host with `kit.call("cap", …)`, which returns a request id at once;
 * the host's answer arrives later through `kit.settle`, which resolves a guest promise with values
 * decoded into the guest realm. The host checks the `PermissionChecker` before any adapter runs,
 * so a denial arrives here as a `PERMISSION_DENIED` guest error.
 *
 * The frozen `tools` global (when the host configured tools) has one async function per tool,
 * `tools.<name>(input)`, sent as capability `"tools.call"`; a failed call rejects with a guest
 * `ToolError` (`name`, `tool`, `message`; plus `code` when the sandbox itself refused it).
 */
export function installGuestCapabilities(kit: GuestKit): void {
  const pending = new Map<number, { resolve(value: unknown): void; reject(reason: unknown): void }>();

  kit.settle = (id, ok, payload) => {
    const entry = pending.get(id);
    if (entry === undefined) return;
    pending.delete(id);
    let value: unknown;
    try {
      value = kit.decode(payload);
    } catch (error) {
      entry.reject(error);
      return;
    }
    if (ok) entry.resolve(value);
    else if (typeof (value as ToolCrossingError).tool === "string") {
      const crossing = value as ToolCrossingError;
      const code = typeof crossing.code === "string" ? crossing.code : undefined;
      entry.reject(kit.makeToolError(crossing.tool, String(crossing.message), code));
    } else {
      const crossing = value as CrossingError;
      entry.reject(kit.makeError(String(crossing.code), String(crossing.message), crossing.name));
    }
  };

  const request = (op: string, args: unknown[]): Promise<unknown> =>
    new Promise((resolve, reject) => {
      const id = kit.call("cap", op, kit.copyOut(args, "args")) as number;
      pending.set(id, { resolve, reject });
    });

  const pathArg = (op: string, path: unknown): string => {
    if (typeof path !== "string" || path === "")
      throw new TypeError(`fs.${op}: path must be a non-empty string`);
    return path;
  };

  if (kit.config.capabilities.includes("fs")) {
    kit.globals.fs = {
      /** Read a file: a Uint8Array, or a string when `encoding` is "utf8"/"utf-8". */
      read(path: unknown, encoding?: unknown): Promise<Uint8Array | string> {
        const p = pathArg("read", path);
        if (encoding !== undefined && encoding !== "utf8" && encoding !== "utf-8") {
          return Promise.reject(new TypeError('fs.read: encoding must be "utf8" or omitted'));
        }
        return request("fs.read", [p]).then((bytes) =>
          encoding === undefined ? (bytes as Uint8Array) : kit.utf8Decode(bytes as Uint8Array),
        );
      },
      /** Write a file (created or truncated) from a string (UTF-8) or bytes. */
      write(path: unknown, data: unknown): Promise<void> {
        const p = pathArg("write", path);
        return request("fs.write", [p, kit.toBytes(data, "fs.write data")]) as Promise<void>;
      },
      /** Names in a directory, sorted. */
      list(path: unknown): Promise<string[]> {
        return request("fs.list", [pathArg("list", path)]) as Promise<string[]>;
      },
      /** `{ type: "file" | "directory" | "symlink" | "other", size (bytes), mtimeMs }`. */
      stat(path: unknown): Promise<{ type: string; size: number; mtimeMs: number }> {
        return request("fs.stat", [pathArg("stat", path)]) as Promise<{
          type: string;
          size: number;
          mtimeMs: number;
        }>;
      },
    };
  }

  if (kit.config.tools.length > 0) {
    const tools: Record<string, (input?: unknown) => Promise<unknown>> = Object.create(null);
    for (const name of kit.config.tools) {
      const call = {
        [name](input?: unknown): Promise<unknown> {
          return new Promise((resolve) => resolve(request("tools.call", [name, input])));
        },
      }[name] as (input?: unknown) => Promise<unknown>;
      tools[name] = call;
    }
    kit.globals.tools = tools;
  }

  if (kit.config.capabilities.includes("fetch")) {
    const headerState = new WeakMap<object, [string, string][]>();
    class Headers {
      constructor(init?: unknown) {
        const list: [string, string][] = [];
        if (init !== undefined && init !== null) {
          const source = headerState.get(init as object);
          if (source !== undefined) for (const [k, v] of source) list.push([k, v]);
          else if (typeof (init as { [Symbol.iterator]?: unknown })[Symbol.iterator] === "function") {
            for (const pair of init as Iterable<unknown>) {
              const items = Array.from(pair as Iterable<unknown>);
              list.push([String(items[0]).toLowerCase(), String(items[1])]);
            }
          } else {
            for (const key of Object.keys(init as object))
              list.push([key.toLowerCase(), String((init as Record<string, unknown>)[key])]);
          }
        }
        headerState.set(this, list);
      }
      get(name: string): string | null {
        const n = String(name).toLowerCase();
        const values = (headerState.get(this) ?? []).filter(([k]) => k === n).map(([, v]) => v);
        return values.length === 0 ? null : values.join(", ");
      }
      has(name: string): boolean {
        const n = String(name).toLowerCase();
        return (headerState.get(this) ?? []).some(([k]) => k === n);
      }
      forEach(callback: (value: string, name: string, headers: Headers) => void, thisArg?: unknown): void {
        for (const [k, v] of (headerState.get(this) ?? []).slice())
          Reflect.apply(callback, thisArg, [v, k, this]);
      }
      *entries(): IterableIterator<[string, string]> {
        for (const [k, v] of (headerState.get(this) ?? []).slice()) yield [k, v];
      }
      *keys(): IterableIterator<string> {
        for (const [k] of (headerState.get(this) ?? []).slice()) yield k;
      }
      *values(): IterableIterator<string> {
        for (const [, v] of (headerState.get(this) ?? []).slice()) yield v;
      }
      [Symbol.iterator](): IterableIterator<[string, string]> {
        return this.entries();
      }
    }

    interface WireResponse {
      status: number;
      statusText: string;
      url: string;
      redirected: boolean;
      headers: [string, string][];
      body: Uint8Array;
    }
    const bodyState = new WeakMap<object, { body: Uint8Array; used: boolean }>();
    const takeBody = (response: object): Uint8Array => {
      const state = bodyState.get(response);
      if (state === undefined) throw new TypeError("Illegal invocation: not a Response");
      if (state.used) throw new TypeError("Response body has already been read");
      state.used = true;
      return state.body;
    };
    class Response {
      readonly status: number;
      readonly statusText: string;
      readonly url: string;
      readonly redirected: boolean;
      readonly headers: Headers;
      readonly type = "basic";
      constructor(wire: WireResponse) {
        this.status = wire.status;
        this.statusText = wire.statusText;
        this.url = wire.url;
        this.redirected = wire.redirected;
        this.headers = new Headers(wire.headers);
        bodyState.set(this, { body: wire.body, used: false });
      }
      get ok(): boolean {
        return this.status >= 200 && this.status <= 299;
      }
      get bodyUsed(): boolean {
        return bodyState.get(this)?.used === true;
      }
      bytes(): Promise<Uint8Array> {
        return new Promise((resolve) => resolve(takeBody(this).slice()));
      }
      arrayBuffer(): Promise<ArrayBuffer> {
        return new Promise((resolve) => resolve(takeBody(this).slice().buffer));
      }
      text(): Promise<string> {
        return new Promise((resolve) => resolve(kit.utf8Decode(takeBody(this))));
      }
      json(): Promise<unknown> {
        return this.text().then((text) => JSON.parse(text));
      }
    }

    const URLClass = kit.globals.URL as { new (input: string): { href: string } };
    const ParamsClass = kit.globals.URLSearchParams as { new (): object };
    kit.globals.fetch = function fetch(
      input: unknown,
      init: Record<string, unknown> = {},
    ): Promise<Response> {
      return new Promise((resolve) => {
        const url = input instanceof URLClass ? input.href : String(input);
        const method = init.method === undefined ? "GET" : String(init.method).toUpperCase();
        const headers = new Headers(init.headers);
        const list = headerState.get(headers) ?? [];
        let body: Uint8Array | undefined;
        if (init.body !== undefined && init.body !== null) {
          if (init.body instanceof ParamsClass) {
            body = kit.utf8Encode(String(init.body));
            if (!headers.has("content-type"))
              list.push(["content-type", "application/x-www-form-urlencoded;charset=UTF-8"]);
          } else {
            if (typeof init.body === "string" && !headers.has("content-type"))
              list.push(["content-type", "text/plain;charset=UTF-8"]);
            body = kit.toBytes(init.body, "fetch body");
          }
        }
        const wire =
          body === undefined ? { url, method, headers: list } : { url, method, headers: list, body };
        resolve(request("fetch", [wire]).then((answer) => new Response(answer as WireResponse)));
      });
    };
  }
}
