import type { CallerPosition, ErrorRecord, KernelKit } from "../kit.js";

/**
 * GUEST REALM. Stack traces that show guest frames only, and the one way the
 * kernel describes a thrown or rejected value.
 *
 * `Error.prepareStackTrace` is pinned (non-writable, non-configurable; in
 * QuickJS-ng, where it is an accessor, through its setter and then getter-only) to a
 * formatter that keeps only frames of the guest file and of registered source
 * modules, formatted by the kernel itself (`at fn (sandbox.js:3:7)`), so user
 * code never receives CallSite objects, host paths, `node:internal` frames or
 * the frames of the kernel. The global `Error` binding is locked for the same
 * reason (V8 consults `<realm>.Error.prepareStackTrace`).
 */
export function installErrors(kit: KernelKit): void {
  const { apply, defineProperty, getOwnPropertyDescriptor } = Reflect;
  const ErrorCtor = Error;
  const objectToString = Object.prototype.toString;
  const startsWith = String.prototype.startsWith;
  const exec = RegExp.prototype.exec;
  const guestFile = kit.config.guestFilename;
  const modulePrefix = kit.config.moduleFilenamePrefix;
  const indexOf = String.prototype.indexOf;
  const RegExpCtor = RegExp;
  // `at fn (sandbox.js:3:7)` or `at sandbox.js:3:7`: the innermost frame of the main guest file.
  // Made on first use (only a described error needs it), from the captures above and without
  // `String.prototype.replace`, which would look up the guest's `Symbol.replace`: compiling a
  // RegExp in every fresh context cost more than the rest of this part.
  let location: RegExp | undefined;
  const locationPattern = (): RegExp => {
    if (location === undefined) {
      let escaped = "";
      for (let i = 0; i < guestFile.length; i++) {
        const char = guestFile[i] as string;
        escaped += (apply(indexOf, "\\^$.*+?()[]{}|/", [char]) as number) >= 0 ? `\\${char}` : char;
      }
      location = new RegExpCtor(`[ (]${escaped}:(\\d+):(\\d+)\\)?$`, "m");
    }
    return location;
  };
  const NumberCtor = Number;

  const callOf = (frame: unknown, method: string): unknown => {
    try {
      const fn = (frame as Record<string, unknown>)[method];
      return typeof fn === "function" ? apply(fn as () => unknown, frame, []) : undefined;
    } catch {
      return undefined;
    }
  };
  const fileOf = (frame: unknown): string | undefined => {
    const name = callOf(frame, "getScriptNameOrSourceURL");
    if (typeof name === "string" && name !== "") return name;
    const file = callOf(frame, "getFileName");
    return typeof file === "string" ? file : undefined;
  };
  const isGuestFile = (file: string | undefined): boolean =>
    file !== undefined && (file === guestFile || (apply(startsWith, file, [modulePrefix]) as boolean));

  const plainFrames = kit.config.plainFrames === true;
  const header = (error: unknown): string => {
    let name: unknown;
    let message: unknown;
    try {
      name = (error as { name?: unknown }).name;
      message = (error as { message?: unknown }).message;
    } catch {
      return "Error";
    }
    const text = typeof message === "string" ? message : "";
    // The plugin host's style: an error named "" is headed by its message alone.
    if (plainFrames && name === "") return text;
    const label = typeof name === "string" && name !== "" ? name : "Error";
    return text !== "" ? `${label}: ${text}` : label;
  };

  /** Undo the async wrapper's shift (see `WrapShift` in sandbox-core) so positions name the original code. */
  const original = (line: number, column: number): number => {
    const insertions = (kit as { runConfig?: { shift?: { insertions: Array<[number, number, number]> } } })
      .runConfig?.shift?.insertions;
    if (insertions === undefined) return column;
    // Insertions are sorted by line then column and add no line breaks: subtract those before the
    // position on its line; a position inside one names the original code where it was inserted.
    const at = column - 1;
    let removed = 0;
    for (let i = 0; i < insertions.length; i++) {
      const [insertLine, insertColumn, length] = insertions[i] as [number, number, number];
      if (insertLine < line) continue;
      if (insertLine > line || at < insertColumn) break;
      if (at < insertColumn + length) return insertColumn - removed + 1;
      removed += length;
    }
    return at - removed + 1;
  };

  const formatFrame = (frame: unknown, file: string): string => {
    const rawLine = callOf(frame, "getLineNumber");
    const rawColumn = callOf(frame, "getColumnNumber");
    const line = typeof rawLine === "number" ? rawLine : 0;
    let column = typeof rawColumn === "number" ? rawColumn : 0;
    if (file === guestFile) column = original(line, column);
    else if (line === 1 && column > kit.config.moduleWrapperLength) column -= kit.config.moduleWrapperLength;
    const where = `${file}:${line}:${column}`;
    let fnName = callOf(frame, "getFunctionName");
    // Code the kernel evaluates itself (an isolate's `evaluate` entry) names its nameless functions "eval".
    if (fnName === "eval" && callOf(frame, "isEval") === true) fnName = "";
    // QuickJS names a script's top level "<eval>" (no identifier can be spelled so); V8 names it nothing.
    if (fnName === "<eval>") fnName = "";
    const prefix = plainFrames
      ? ""
      : `${callOf(frame, "isAsync") === true ? "async " : ""}${callOf(frame, "isConstructor") === true ? "new " : ""}`;
    return typeof fnName === "string" && fnName !== ""
      ? `${prefix}${fnName} (${where})`
      : `${prefix}${where}`;
  };

  let formatted = 0;
  // While set, the formatter answers with the top frame's raw position (see callerPosition).
  let probing = false;
  const prepareStackTrace = (error: unknown, frames: unknown): unknown => {
    if (probing) {
      probing = false;
      const top = (frames as unknown[])[0];
      if (top === undefined) return null;
      const position = Object.create(null) as Record<string, unknown>;
      position.file = callOf(top, "getFileName");
      position.line = callOf(top, "getLineNumber");
      position.column = callOf(top, "getColumnNumber");
      return position;
    }
    formatted++;
    let text = header(error);
    const list = frames as unknown[];
    for (let i = 0; i < list.length; i++) {
      const file = fileOf(list[i]);
      if (isGuestFile(file)) text += `\n    at ${formatFrame(list[i], file as string)}`;
    }
    return text;
  };
  // A null-prototype descriptor filled by assignment: an object literal would cost a new hidden
  // class in every fresh context (see the codec).
  const locked = Object.create(null) as PropertyDescriptor;
  locked.writable = false;
  locked.enumerable = false;
  locked.configurable = false;
  const engineHook = getOwnPropertyDescriptor(ErrorCtor, "prepareStackTrace");
  if (engineHook !== undefined && typeof engineHook.set === "function") {
    // QuickJS-ng keeps the formatter in the engine behind an accessor: set it through the setter,
    // then keep only the getter (a data property in its place would never be consulted).
    apply(engineHook.set, ErrorCtor, [prepareStackTrace]);
    const getterOnly = Object.create(null) as PropertyDescriptor;
    if (engineHook.get !== undefined) getterOnly.get = engineHook.get;
    getterOnly.set = undefined as never;
    getterOnly.enumerable = false;
    getterOnly.configurable = false;
    defineProperty(ErrorCtor, "prepareStackTrace", getterOnly);
  } else {
    locked.value = prepareStackTrace;
    defineProperty(ErrorCtor, "prepareStackTrace", locked);
  }
  locked.value = ErrorCtor;
  defineProperty(globalThis, "Error", locked);
  const before = formatted;
  // Reflect.construct: a bundler drops a bare `new Error()` whose value is unused.
  Reflect.construct(ErrorCtor, []);
  kit.stacksAtConstruction = formatted !== before;

  const captureStackTrace = (ErrorCtor as { captureStackTrace?: (target: object, callee: unknown) => void })
    .captureStackTrace;
  kit.callerPosition = (callee) => {
    if (typeof captureStackTrace !== "function") return null;
    const holder = Object.create(null) as { stack?: unknown };
    probing = true;
    try {
      apply(captureStackTrace, ErrorCtor, [holder, callee]);
      const position = holder.stack;
      return typeof position === "object" ? (position as CallerPosition | null) : null;
    } finally {
      probing = false;
    }
  };

  // V8's accessor for `stack` (own on each error from Node 22's V8, on the prototype in some
  // builds); looked up on first use, so installing the kernel formats no stack.
  let nativeStackGetter: (() => unknown) | undefined | null = null;
  const getterOf = (target: object): (() => unknown) | undefined => {
    const descriptor = getOwnPropertyDescriptor(target, "stack");
    return descriptor?.get;
  };
  kit.nativeStackOf = (error: object): string | undefined => {
    try {
      const descriptor = getOwnPropertyDescriptor(error, "stack");
      if (descriptor === undefined) return undefined;
      if ("value" in descriptor) return typeof descriptor.value === "string" ? descriptor.value : undefined;
      if (nativeStackGetter === null)
        nativeStackGetter = getterOf(new ErrorCtor()) ?? getterOf(ErrorCtor.prototype);
      if (descriptor.get === undefined || descriptor.get !== nativeStackGetter) return undefined;
      const text = apply(descriptor.get, error, []);
      return typeof text === "string" ? text : undefined;
    } catch {
      return undefined;
    }
  };

  kit.describeError = (value: unknown): ErrorRecord => {
    try {
      if (
        value !== null &&
        typeof value === "object" &&
        apply(objectToString, value, []) === "[object Error]"
      ) {
        let name: unknown;
        let message: unknown;
        try {
          name = (value as { name?: unknown }).name;
          message = (value as { message?: unknown }).message;
        } catch {
          // A throwing getter: describe what can be described.
        }
        const stack = kit.nativeStackOf(value) ?? "";
        const record: ErrorRecord = {
          name: typeof name === "string" && name !== "" ? name : "Error",
          message: typeof message === "string" ? message : message === undefined ? "" : kit.inspect(message),
          stack,
        };
        const found = apply(exec, locationPattern(), [stack]) as RegExpExecArray | null;
        if (found !== null) {
          record.line = NumberCtor(found[1]);
          record.column = NumberCtor(found[2]);
        }
        return record;
      }
      return { name: "", message: kit.inspect(value), stack: "" };
    } catch {
      return { name: "", message: "a value that could not be described", stack: "" };
    }
  };
}
