import type { Intrinsics } from "./intrinsics.js";
import type { Ctx, Entry, List } from "./shared.js";
import type { Values } from "./values.js";

/**
 * GUEST REALM. The head of a function, class or error: `[Function: f]`, `[class A extends B]`, an
 * error's stack with its name fixed up and the frames it shares with its cause folded.
 */
export function makeBases(I: Intrinsics, V: Values) {
  const {
    AsyncFunctionPrototype,
    AsyncGeneratorFunctionPrototype,
    GeneratorFunctionPrototype,
    ReflectApply,
    charCodeAt,
    create,
    errorStackGetterOf,
    functionToString,
    getOwnDescriptor,
    getPrototypeOf,
    isArray,
    mathMin,
    stringEndsWith,
    stringIncludes,
    stringIndexOf,
    stringRepeat,
    stringSlice,
    stringStartsWith,
  } = I;
  const {
    entry,
    findDesc,
    findKey,
    getPrefix,
    hasProperty,
    isDataDesc,
    isError,
    join,
    newList,
    primitiveText,
    propertyDesc,
    push,
    readData,
    removeKey,
  } = V;

  // ---- functions ---------------------------------------------------------
  const getClassBase = (value: object, ctorName: string | null, tag: string): string => {
    const own = getOwnDescriptor(value, "name");
    const name = own !== undefined && isDataDesc(own) && own.value ? primitiveText(own.value) : undefined;
    let base = `class ${name ?? "(anonymous)"}`;
    if (ctorName !== "Function" && ctorName !== null) base += ` [${ctorName}]`;
    if (tag !== "" && ctorName !== tag) base += ` [${tag}]`;
    if (ctorName !== null) {
      const parent = getPrototypeOf(value);
      const superName = parent === null ? undefined : readData(parent, "name");
      if (superName) base += ` extends ${primitiveText(superName) ?? ""}`;
    } else {
      base += " extends [null prototype]";
    }
    return `[${base}]`;
  };
  const looksLikeClass = (source: string): boolean => {
    if (!stringStartsWith(source, "class") || !stringEndsWith(source, "}")) return false;
    const slice = stringSlice(source, 5, -1);
    const bracket = stringIndexOf(slice, "{");
    if (bracket === -1) return false;
    if (!stringIncludes(stringSlice(slice, 0, bracket), "(")) return true;
    // Node's slow path: `class` followed by white space, a heritage without comments, then `{`.
    let head = "";
    let i = 0;
    while (i < slice.length) {
      const end = stringStartsWith(slice, "//", i)
        ? stringIndexOf(slice, "\n", i) + 1
        : stringStartsWith(slice, "/*", i)
          ? stringIndexOf(slice, "*/", i + 2) + 2
          : -1;
      if (end > 0) {
        i = end;
      } else {
        head += slice[i];
        i++;
      }
    }
    const space = charCodeAt(head, 0);
    const isSpace =
      space === 32 ||
      (space >= 9 && space <= 13) ||
      space === 0xa0 ||
      space === 0x1680 ||
      (space >= 0x2000 && space <= 0x200a) ||
      space === 0x2028 ||
      space === 0x2029 ||
      space === 0x202f ||
      space === 0x205f ||
      space === 0x3000 ||
      space === 0xfeff;
    if (!isSpace) return false;
    const brace = stringIndexOf(head, "{");
    return brace !== -1 && !stringIncludes(stringSlice(head, 0, brace), "(");
  };
  const getFunctionBase = (value: object, ctorName: string | null, tag: string): string => {
    let source = "";
    try {
      source = functionToString(value);
    } catch {
      // not a function source Node could read either
    }
    if (looksLikeClass(source)) return getClassBase(value, ctorName, tag);
    const proto = getPrototypeOf(value);
    let type = "Function";
    if (proto === GeneratorFunctionPrototype || proto === AsyncGeneratorFunctionPrototype)
      type = `Generator${type}`;
    if (proto === AsyncFunctionPrototype || proto === AsyncGeneratorFunctionPrototype) type = `Async${type}`;
    let base = `[${type}`;
    if (ctorName === null) base += " (null prototype)";
    const nameDesc = findDesc(value, "name");
    const name = nameDesc !== undefined && isDataDesc(nameDesc) ? primitiveText(nameDesc.value) : "";
    if (name === "" || name === undefined) base += " (anonymous)";
    else base += `: ${name}`;
    base += "]";
    if (ctorName !== type && ctorName !== null) base += ` ${ctorName}`;
    if (tag !== "" && ctorName !== tag) base += ` [${tag}]`;
    return base;
  };

  // ---- errors ------------------------------------------------------------
  const errorToString = (error: object): string => {
    const rawName = readData(error, "name");
    const rawMessage = readData(error, "message");
    const name = rawName === undefined ? "Error" : (primitiveText(rawName) ?? "Error");
    const message = rawMessage === undefined ? "" : (primitiveText(rawMessage) ?? "");
    if (name === "") return message;
    if (message === "") return name;
    return `${name}: ${message}`;
  };
  const getStackString = (error: object): string => {
    const desc = findDesc(error, "stack");
    let stack: unknown;
    if (desc !== undefined) {
      if (isDataDesc(desc)) stack = desc.value;
      else if (desc.get !== undefined && desc.get === errorStackGetterOf())
        stack = ReflectApply(desc.get, error, []);
    }
    if (stack) {
      const text = primitiveText(stack);
      if (text !== undefined) return text;
    }
    return errorToString(error);
  };
  const splitLines = (text: string): List<string> => {
    const lines: List<string> = newList();
    let start = 0;
    for (;;) {
      const newline = stringIndexOf(text, "\n", start);
      if (newline === -1) break;
      push(lines, stringSlice(text, start, newline));
      start = newline + 1;
    }
    push(lines, stringSlice(text, start));
    return lines;
  };
  const listIndexOf = (list: List<string>, value: string): number => {
    for (let i = 0; i < list.length; i++) if (list[i] === value) return i;
    return -1;
  };
  const identicalSequenceRange = (a: List<string>, b: List<string>): { len: number; offset: number } => {
    const result = create(null) as { len: number; offset: number };
    result.len = 0;
    result.offset = 0;
    for (let i = 0; i < a.length - 3; i++) {
      const pos = listIndexOf(b, a[i]!);
      if (pos !== -1) {
        const rest = b.length - pos;
        if (rest > 3) {
          let len = 1;
          const maxLen = mathMin(a.length - i, rest);
          while (maxLen > len && a[i + len] === b[pos + len]) len++;
          if (len > 3) {
            result.len = len;
            result.offset = i;
            return result;
          }
        }
      }
    }
    return result;
  };
  const getStackFrames = (error: object, stack: string): List<string> => {
    const frames = splitLines(stack);
    const cause = readData(error, "cause");
    if (cause !== null && typeof cause === "object" && isError(cause)) {
      const causeStack = getStackString(cause);
      const causeStackStart = stringIndexOf(causeStack, "\n    at");
      if (causeStackStart !== -1) {
        const causeFrames = splitLines(stringSlice(causeStack, causeStackStart + 1));
        const range = identicalSequenceRange(frames, causeFrames);
        if (range.len > 0) {
          const skipped = range.len - 2;
          const replaced: List<string> = newList();
          for (let i = 0; i < frames.length; i++) {
            if (i === range.offset + 1)
              push(replaced, `    ... ${skipped} lines matching cause stack trace ...`);
            if (i <= range.offset || i > range.offset + skipped) push(replaced, frames[i]!);
          }
          return replaced;
        }
      }
    }
    return frames;
  };
  /** The name a null-prototype error's stack starts with (Node's two regular expressions). */
  const nullPrototypeErrorName = (stack: string): string => {
    const first = charCodeAt(stack, 0);
    if (first >= 65 && first <= 90) {
      let i = 1;
      for (; i < stack.length; i++) {
        const code = charCodeAt(stack, i);
        const allowed =
          (code >= 97 && code <= 122) ||
          (code >= 65 && code <= 90) ||
          (code >= 48 && code <= 57) ||
          code === 95 ||
          code === 32 ||
          code === 91 ||
          code === 93 ||
          code === 40 ||
          code === 41 ||
          code === 45;
        if (!allowed) break;
      }
      if (i >= 2 && (stack[i] === ":" || stringStartsWith(stack, "\n    at", i)))
        return stringSlice(stack, 0, i);
    }
    if (stringEndsWith(stack, "Error")) {
      for (let i = 0; i < stack.length; i++) {
        const code = charCodeAt(stack, i);
        const allowed =
          (code >= 97 && code <= 122) ||
          (code >= 65 && code <= 90) ||
          (code >= 48 && code <= 57) ||
          code === 95 ||
          code === 45;
        if (!allowed) return "";
      }
      return stack;
    }
    return "";
  };
  const improveStack = (stack: string, ctorName: string | null, name: string, tag: string): string => {
    let len = name.length;
    if (
      ctorName === null ||
      (stringEndsWith(name, "Error") &&
        stringStartsWith(stack, name) &&
        (stack.length === len || stack[len] === ":" || stack[len] === "\n"))
    ) {
      let fallback = "Error";
      if (ctorName === null) {
        fallback = nullPrototypeErrorName(stack);
        len = fallback.length;
        fallback = fallback || "Error";
      }
      const prefix = stringSlice(getPrefix(ctorName, tag, fallback), 0, -1);
      if (name !== prefix) {
        if (stringIncludes(prefix, name)) {
          if (len === 0) return `${prefix}: ${stack}`;
          return `${prefix}${stringSlice(stack, len)}`;
        }
        return `${prefix} [${name}]${stringSlice(stack, len)}`;
      }
    }
    return stack;
  };
  const indentLines = (text: string, indentation: string): string => {
    const lines = splitLines(text);
    return join(lines, `\n${indentation}`);
  };
  const formatError = (
    error: object,
    ctorName: string | null,
    tag: string,
    ctx: Ctx,
    keys: List<Entry>,
  ): string => {
    const rawName = readData(error, "name");
    const name = rawName !== null && rawName !== undefined ? (primitiveText(rawName) ?? "Error") : "Error";
    let stack = getStackString(error);
    // Hide name, message and stack when the stack already shows them.
    const duplicates = ["name", "message", "stack"];
    for (let d = 0; d < duplicates.length && keys.length !== 0; d++) {
      const index = findKey(keys, duplicates[d]!);
      if (index !== -1) {
        const desc = keys[index]!.desc;
        const text = isDataDesc(desc) ? primitiveText(desc.value) : undefined;
        if (text !== undefined && stringIncludes(stack, text)) removeKey(keys, index);
      }
    }
    if (hasProperty(error, "cause") && findKey(keys, "cause") === -1) {
      push(keys, entry("cause", propertyDesc(error, "cause")));
    }
    const errors = readData(error, "errors");
    if (errors !== null && typeof errors === "object" && isArray(errors) && findKey(keys, "errors") === -1) {
      push(keys, entry("errors", propertyDesc(error, "errors")));
    }
    stack = improveStack(stack, ctorName, name, tag);
    const message = readData(error, "message");
    let pos = -1;
    if (typeof message === "string" && message !== "") {
      pos = stringIndexOf(stack, message) || -1;
      if (pos !== -1) pos += message.length;
    }
    const stackStart = stringIndexOf(stack, "\n    at", pos);
    if (stackStart === -1) {
      stack = `[${stack}]`;
    } else {
      const frames = getStackFrames(error, stringSlice(stack, stackStart + 1));
      stack = `${stringSlice(stack, 0, stackStart)}\n${join(frames, "\n")}`;
    }
    if (ctx.indentationLvl !== 0) stack = indentLines(stack, stringRepeat(" ", ctx.indentationLvl));
    return stack;
  };

  return { __proto__: null, formatError, getFunctionBase };
}

export type Bases = ReturnType<typeof makeBases>;
