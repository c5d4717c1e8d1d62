import type { KernelKit } from "../kit.js";

/**
 * GUEST REALM. Guest→host calls with a reply: `kit.hostCall(name, value)`
 * encodes `value` with the codec, asks the host through the bridge
 * (`call`, id, name, text) and returns a guest-realm promise that the host
 * settles through the `reply` entry (id, ok, text). A refused call rejects at
 * once. Nothing of the host realm reaches the guest: the reply is codec text
 * decoded here, and a failed call rejects with a guest-realm error built from
 * the host's `{ name, message }`.
 */
export function installCalls(kit: KernelKit & CallsKit): void {
  const { apply } = Reflect;
  const MapCtor = Map;
  const mapGet = Map.prototype.get;
  const mapSet = Map.prototype.set;
  const mapDelete = Map.prototype.delete;
  const mapClear = Map.prototype.clear;
  const PromiseCtor = Promise;
  const ErrorCtor = Error;
  const TypeErrorCtor = TypeError;
  const parse = JSON.parse;
  const defineProperty = Reflect.defineProperty;
  const ObjectCreate = Object.create;
  const freeze = Object.freeze;
  const G = globalThis;
  /** Sent instead of an input too large to send; never codec text (see the host's `answerCall`). */
  const INPUT_TOO_LARGE = '["!too-large"]';

  interface Pending {
    resolve: (value: unknown) => void;
    reject: (error: unknown) => void;
  }
  const pending: Map<number, Pending> = new MapCtor();
  let nextId = 1;

  /** A guest-realm error from the host's `{ name, message, tool? }` JSON (a `ToolError` for a failed tool). */
  const guestError = (text: string): Error => {
    let name = "Error";
    let message = "the host call failed";
    let tool: string | undefined;
    try {
      const record = parse(text) as { name?: unknown; message?: unknown; tool?: unknown };
      if (typeof record.name === "string" && record.name !== "") name = record.name;
      if (typeof record.message === "string") message = record.message;
      if (typeof record.tool === "string") tool = record.tool;
    } catch {
      // Keep the generic text.
    }
    const error = new ErrorCtor(message);
    defineProperty(error, "name", { value: name, writable: true, enumerable: false, configurable: true });
    if (tool !== undefined)
      defineProperty(error, "tool", { value: tool, writable: true, enumerable: true, configurable: true });
    return error;
  };

  kit.hostCall = (name, value) =>
    new PromiseCtor((resolve, reject) => {
      const id = nextId++;
      let text: string;
      const maxCallBytes = kit.runConfig.maxCallBytes;
      try {
        text = kit.encode(value, "input", maxCallBytes);
      } catch (error) {
        if (!kit.isNotTransferable(error)) throw error;
        if (error.what !== `larger than ${maxCallBytes} bytes`) {
          reject(new TypeErrorCtor(`${error.path} cannot be sent to the host: it is ${error.what}`));
          return;
        }
        // Too large to send: the host still hears of the call, so it refuses it by the tool's
        // name and journals it, rather than the guest failing it unseen.
        text = INPUT_TOO_LARGE;
      }
      let accepted: unknown;
      try {
        accepted = kit.bridge("call", id, name, text);
      } catch {
        accepted = false;
      }
      if (accepted !== true) {
        reject(guestError(typeof accepted === "string" ? accepted : ""));
        return;
      }
      apply(mapSet, pending, [id, { resolve, reject }]);
    });

  kit.defineTools = (names) => {
    const tools = ObjectCreate(null) as Record<string, (input?: unknown) => Promise<unknown>>;
    for (let i = 0; i < names.length; i++) {
      const name = names[i] as string;
      defineProperty(tools, name, {
        value: {
          [name]: (input?: unknown): Promise<unknown> => kit.hostCall(name, input),
        }[name],
        enumerable: true,
      });
    }
    // Not through defineGlobal: the binding is neither writable nor configurable, so guest code
    // cannot swap the host tools for look-alikes (assignment fails as the language says: silently
    // in sloppy code, a TypeError in strict code) and the object is frozen.
    defineProperty(G, "tools", {
      value: freeze(tools),
      writable: false,
      enumerable: false,
      configurable: false,
    });
  };

  kit.entries.reply = (id: number, ok: boolean, text: string) => {
    const call = apply(mapGet, pending, [id]) as Pending | undefined;
    if (call === undefined) return;
    apply(mapDelete, pending, [id]);
    if (!ok) {
      call.reject(guestError(text));
      return;
    }
    let value: unknown;
    try {
      value = kit.decode(text);
    } catch {
      call.reject(new TypeErrorCtor("the host's reply could not be decoded"));
      return;
    }
    call.resolve(value);
  };
  const end = kit.entries.end;
  kit.entries.end = () => {
    apply(mapClear, pending, []);
    if (end !== undefined) end();
  };
}

/** What {@link installCalls} and the settle part add to the kit. */
export interface CallsKit {
  /** Limits of the current execution, set by the `boot` entry. */
  runConfig: RunConfig;
  /** Call the host; settles when the host replies. */
  hostCall(name: string, value: unknown): Promise<unknown>;
  /** Define the frozen, non-writable, non-configurable global `tools` whose members are async functions calling the host by name. */
  defineTools(names: readonly string[]): void;
}

/** Per-execution limits, handed to the `boot` entry as JSON. */
export interface RunConfig {
  /** Largest result the guest may send, in bytes (codec text × 2). */
  maxResultBytes: number;
  /** Largest payload of one guest→host call, in bytes. */
  maxCallBytes: number;
  /** Past about this many characters a console line stops listing entries (`format`'s budget); no bound when absent. */
  maxLogChars?: number;
  /** Names of the host functions the guest may call as `tools.<name>(input)`; none when absent. */
  tools?: string[];
  /** How the async wrapper moved positions in the guest code (sandbox-core's `WrapShift`). */
  shift?: { insertions: Array<[line: number, column: number, length: number]> };
}
