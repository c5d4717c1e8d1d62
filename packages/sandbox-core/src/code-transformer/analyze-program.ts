import type { Program } from "acorn";

/** Names of the built-in rules, in the order they are checked. */
export const BUILTIN_RULE_NAMES = [
  "max-code-length",
  "block-process",
  "block-require",
  "block-import-dynamic",
  "block-eval",
  "block-function-constructor",
  "block-global-this",
  "block-proto-access",
  "block-constructor-access",
  "warn-while-true",
  "warn-infinite-for",
] as const;

/** One of {@link BUILTIN_RULE_NAMES}. */
export type BuiltinRuleName = (typeof BUILTIN_RULE_NAMES)[number];

/** Something the analysis found, attributed to the rule that acts on it. */
export interface AnalysisFinding {
  rule: Exclude<BuiltinRuleName, "max-code-length">;
  /** What was found, e.g. "access to `process`". */
  message: string;
  /** Character offset in the source. */
  start: number;
}

/** A loose ESTree node: every node has `type`, `start` and `end`. */
interface N {
  type: string;
  start: number;
  end: number;
  [key: string]: unknown;
}

/** A constant the analysis could fold: a primitive or an array of them. */
type Constant = string | number | boolean | null | undefined | readonly Constant[];
const UNKNOWN: unique symbol = Symbol("unknown");
type Folded = Constant | typeof UNKNOWN;

/** Globals that are dangerous by themselves, and the rule that blocks them. */
const DANGEROUS_GLOBALS: ReadonlyMap<string, AnalysisFinding["rule"]> = new Map([
  ["process", "block-process"],
  ["require", "block-require"],
  ["eval", "block-eval"],
  ["Function", "block-function-constructor"],
]);

/** Names that evaluate to the global object. */
const ROOT_NAMES: ReadonlySet<string> = new Set(["globalThis", "global", "window", "self"]);

/** Legacy accessors that read or write prototypes. */
const PROTO_NAMES: ReadonlySet<string> = new Set([
  "__proto__",
  "__defineGetter__",
  "__defineSetter__",
  "__lookupGetter__",
  "__lookupSetter__",
]);

/** `Reflect`/`Object` methods whose second argument is a property key. */
const REFLECTIVE_KEYED: ReadonlySet<string> = new Set([
  "get",
  "set",
  "has",
  "getOwnPropertyDescriptor",
  "defineProperty",
  "deleteProperty",
]);

/** `Function.x` members that run code. */
const FUNCTION_INVOKERS: ReadonlySet<string> = new Set(["call", "apply", "bind"]);

/** String methods the folder may evaluate on constants. */
const STRING_METHODS: ReadonlySet<string> = new Set([
  "concat",
  "toLowerCase",
  "toUpperCase",
  "trim",
  "trimStart",
  "trimEnd",
  "slice",
  "substring",
  "substr",
  "split",
  "repeat",
  "replace",
  "replaceAll",
  "padStart",
  "padEnd",
  "at",
  "charAt",
  "normalize",
  "toString",
  "valueOf",
]);
const ARRAY_METHODS: ReadonlySet<string> = new Set([
  "join",
  "reverse",
  "concat",
  "slice",
  "toReversed",
  "at",
]);
const MAX_FOLD_DEPTH = 64;

interface Binding {
  root: boolean;
  constValue: Folded;
  isConst: boolean;
}

class Scope {
  readonly names = new Map<string, Binding>();
  constructor(
    readonly parent: Scope | undefined,
    readonly isFunction: boolean,
    readonly thisIsRoot: boolean,
    readonly strict: boolean,
  ) {}

  lookup(name: string): Binding | undefined {
    for (let scope: Scope | undefined = this; scope; scope = scope.parent) {
      const binding = scope.names.get(name);
      if (binding) return binding;
    }
    return undefined;
  }

  functionScope(): Scope {
    let scope: Scope = this;
    while (!scope.isFunction && scope.parent) scope = scope.parent;
    return scope;
  }

  declare(name: string, isConst: boolean): void {
    if (!this.names.has(name)) this.names.set(name, { root: false, constValue: UNKNOWN, isConst });
  }
}

function isNode(value: unknown): value is N {
  return (
    typeof value === "object" && value !== null && typeof (value as { type?: unknown }).type === "string"
  );
}

function children(node: N): N[] {
  const out: N[] = [];
  for (const key of Object.keys(node)) {
    if (key === "type" || key === "loc" || key === "range") continue;
    const value = node[key];
    if (Array.isArray(value)) {
      for (const item of value) if (isNode(item)) out.push(item);
    } else if (isNode(value)) out.push(value);
  }
  return out;
}

function node(value: unknown): N | undefined {
  return isNode(value) ? value : undefined;
}

function nodes(value: unknown): N[] {
  return Array.isArray(value) ? value.filter(isNode) : [];
}

function hasUseStrict(body: N[]): boolean {
  for (const statement of body) {
    if (statement.type !== "ExpressionStatement" || typeof statement.directive !== "string") return false;
    if (statement.directive === "use strict") return true;
  }
  return false;
}

function isFunctionNode(n: N): boolean {
  return (
    n.type === "FunctionDeclaration" ||
    n.type === "FunctionExpression" ||
    n.type === "ArrowFunctionExpression"
  );
}

function isLoop(n: N): boolean {
  return (
    n.type === "WhileStatement" ||
    n.type === "DoWhileStatement" ||
    n.type === "ForStatement" ||
    n.type === "ForInStatement" ||
    n.type === "ForOfStatement"
  );
}

/** Identifier names bound by a pattern. */
function patternNames(pattern: N | undefined, out: string[] = []): string[] {
  if (!pattern) return out;
  switch (pattern.type) {
    case "Identifier":
      out.push(pattern.name as string);
      break;
    case "ObjectPattern":
      for (const prop of nodes(pattern.properties)) {
        patternNames(prop.type === "RestElement" ? node(prop.argument) : node(prop.value), out);
      }
      break;
    case "ArrayPattern":
      for (const element of nodes(pattern.elements)) patternNames(element, out);
      break;
    case "AssignmentPattern":
      patternNames(node(pattern.left), out);
      break;
    case "RestElement":
      patternNames(node(pattern.argument), out);
      break;
  }
  return out;
}

/**
 * Scope-aware static analysis of one program: resolves identifiers against
 * their declarations, follows aliases of the global object
 * (`const g = globalThis`), folds constant strings (`"pro" + "cess"`,
 * templates, `String.fromCharCode`, `[..].join()`, `const` bindings) and
 * reports everything the built-in rules act on. Property names, strings,
 * comments and template text are never mistaken for references.
 */
export function analyzeProgram(program: Program, sourceType: "script" | "module"): AnalysisFinding[] {
  return new Analyzer(program as unknown as N, sourceType).run();
}

class Analyzer {
  private readonly scopes = new Map<N, Scope>();
  private readonly methods = new WeakSet<N>();
  private findings: AnalysisFinding[] = [];
  private reporting = false;
  private changed = false;
  private readonly programScope: Scope;

  constructor(
    private readonly program: N,
    sourceType: "script" | "module",
  ) {
    const body = nodes(program.body);
    const strict = sourceType === "module" || hasUseStrict(body);
    this.programScope = new Scope(undefined, true, sourceType === "script", strict);
    this.scopes.set(program, this.programScope);
  }

  run(): AnalysisFinding[] {
    this.declareIn(nodes(this.program.body), this.programScope, this.programScope);
    // Alias and constant facts flow forward and backward: iterate to a fixpoint, then report.
    for (let pass = 0; pass < 6; pass++) {
      this.changed = false;
      this.visitAll(nodes(this.program.body), this.programScope);
      if (!this.changed) break;
    }
    this.reporting = true;
    this.findings = [];
    this.visitAll(nodes(this.program.body), this.programScope);
    const seen = new Set<string>();
    return this.findings
      .sort((a, b) => a.start - b.start)
      .filter((finding) => {
        const key = `${finding.rule}@${finding.start}:${finding.message}`;
        if (seen.has(key)) return false;
        seen.add(key);
        return true;
      });
  }

  private flag(rule: AnalysisFinding["rule"], message: string, at: N): void {
    if (this.reporting) this.findings.push({ rule, message, start: at.start });
  }

  // ── declarations ───────────────────────────────────────────────────────

  private declareIn(list: N[], block: Scope, fn: Scope): void {
    for (const child of list) this.declare(child, block, fn);
  }

  private declare(n: N, block: Scope, fn: Scope): void {
    switch (n.type) {
      case "FunctionDeclaration": {
        const id = node(n.id);
        if (id) {
          block.declare(id.name as string, false);
          if (!block.strict) fn.declare(id.name as string, false);
        }
        this.declareFunction(n, block);
        return;
      }
      case "FunctionExpression":
      case "ArrowFunctionExpression":
        this.declareFunction(n, block);
        return;
      case "ClassDeclaration":
      case "ClassExpression": {
        const id = node(n.id);
        if (id && n.type === "ClassDeclaration") block.declare(id.name as string, false);
        const classScope = new Scope(block, false, false, true);
        if (id && n.type === "ClassExpression") classScope.declare(id.name as string, false);
        this.scopes.set(n, classScope);
        const superClass = node(n.superClass);
        if (superClass) this.declare(superClass, block, fn);
        const body = node(n.body);
        if (body) this.declareIn(nodes(body.body), classScope, fn);
        return;
      }
      case "MethodDefinition":
      case "PropertyDefinition": {
        const value = node(n.value);
        if (value && isFunctionNode(value)) this.methods.add(value);
        this.declareIn(children(n), block, fn);
        return;
      }
      case "Property": {
        const value = node(n.value);
        if (value && isFunctionNode(value)) this.methods.add(value);
        this.declareIn(children(n), block, fn);
        return;
      }
      case "AssignmentExpression": {
        const left = node(n.left);
        const right = node(n.right);
        if (left?.type === "MemberExpression" && right && isFunctionNode(right)) this.methods.add(right);
        this.declareIn(children(n), block, fn);
        return;
      }
      case "VariableDeclaration": {
        const kind = n.kind as string;
        for (const declarator of nodes(n.declarations)) {
          for (const name of patternNames(node(declarator.id))) {
            if (kind === "var") fn.declare(name, false);
            else block.declare(name, kind === "const");
          }
          this.declareIn(children(declarator), block, fn);
        }
        return;
      }
      case "StaticBlock": {
        const scope = new Scope(block, true, false, true);
        this.scopes.set(n, scope);
        this.declareIn(nodes(n.body), scope, scope);
        return;
      }
      case "BlockStatement":
      case "ForStatement":
      case "ForInStatement":
      case "ForOfStatement":
      case "SwitchStatement": {
        const scope = new Scope(block, false, false, block.strict);
        this.scopes.set(n, scope);
        this.declareIn(children(n), scope, fn);
        return;
      }
      case "CatchClause": {
        const scope = new Scope(block, false, false, block.strict);
        this.scopes.set(n, scope);
        for (const name of patternNames(node(n.param))) scope.declare(name, false);
        this.declareIn(children(n), scope, fn);
        return;
      }
      case "ImportDeclaration":
        for (const specifier of nodes(n.specifiers)) {
          const local = node(specifier.local);
          if (local) block.declare(local.name as string, true);
        }
        return;
      default:
        this.declareIn(children(n), block, fn);
    }
  }

  private declareFunction(n: N, outer: Scope): void {
    const bodyNode = node(n.body);
    const bodyList = bodyNode?.type === "BlockStatement" ? nodes(bodyNode.body) : [];
    const strict = outer.strict || hasUseStrict(bodyList);
    const arrow = n.type === "ArrowFunctionExpression";
    const outerThis = outer.functionScope().thisIsRoot;
    const thisIsRoot = arrow ? outerThis : !strict && !this.methods.has(n);
    const scope = new Scope(outer, true, thisIsRoot, strict);
    this.scopes.set(n, scope);
    const id = node(n.id);
    if (id && n.type === "FunctionExpression") scope.declare(id.name as string, false);
    if (!arrow) scope.declare("arguments", false);
    for (const param of nodes(n.params)) {
      for (const name of patternNames(param)) scope.declare(name, false);
      this.declare(param, scope, scope);
    }
    if (bodyNode?.type === "BlockStatement") this.declareIn(bodyList, scope, scope);
    else if (bodyNode) this.declare(bodyNode, scope, scope);
  }

  // ── analysis ───────────────────────────────────────────────────────────

  private visitAll(list: N[], scope: Scope): void {
    for (const child of list) this.visit(child, scope);
  }

  private visit(n: N | undefined, scope: Scope): void {
    if (!n) return;
    switch (n.type) {
      case "Identifier":
        this.reference(n, scope);
        return;
      case "FunctionDeclaration":
      case "FunctionExpression":
      case "ArrowFunctionExpression":
        this.visitFunction(n, scope);
        return;
      case "ClassDeclaration":
      case "ClassExpression": {
        this.visit(node(n.superClass), scope);
        const classScope = this.scopes.get(n) ?? scope;
        const body = node(n.body);
        if (body) this.visitAll(nodes(body.body), classScope);
        return;
      }
      case "StaticBlock":
      case "BlockStatement":
      case "ForInStatement":
      case "ForOfStatement":
      case "SwitchStatement":
        this.visitAll(children(n), this.scopes.get(n) ?? scope);
        return;
      case "ForStatement": {
        const inner = this.scopes.get(n) ?? scope;
        const test = node(n.test);
        if (!test || this.truthy(test, inner)) {
          if (!this.hasExit(node(n.body))) {
            this.flag("warn-infinite-for", "`for` loop without a condition or exit", n);
          }
        }
        this.visitAll(children(n), inner);
        return;
      }
      case "WhileStatement":
      case "DoWhileStatement": {
        const test = node(n.test);
        if (test && this.truthy(test, scope) && !this.hasExit(node(n.body))) {
          this.flag(
            "warn-while-true",
            `\`${n.type === "WhileStatement" ? "while" : "do…while"}\` loop with a constant true condition and no exit`,
            n,
          );
        }
        this.visitAll(children(n), scope);
        return;
      }
      case "LabeledStatement": {
        this.visit(node(n.body), scope);
        return;
      }
      case "BreakStatement":
      case "ContinueStatement":
      case "MetaProperty":
      case "PrivateIdentifier":
      case "Literal":
      case "ThisExpression":
      case "Super":
        return;
      case "CatchClause": {
        const inner = this.scopes.get(n) ?? scope;
        this.visitPattern(node(n.param), inner, false, "declare");
        this.visit(node(n.body), inner);
        return;
      }
      case "VariableDeclaration":
        for (const declarator of nodes(n.declarations))
          this.visitDeclarator(declarator, scope, n.kind as string);
        return;
      case "MemberExpression":
        this.visitMember(n, scope);
        return;
      case "CallExpression":
      case "NewExpression":
        this.visitCall(n, scope);
        return;
      case "AssignmentExpression":
        this.visitAssignment(n, scope);
        return;
      case "UnaryExpression": {
        const argument = node(n.argument);
        // `typeof process` is harmless feature detection.
        if (n.operator === "typeof" && argument?.type === "Identifier") return;
        this.visit(argument, scope);
        return;
      }
      case "Property": {
        const key = node(n.key);
        const value = node(n.value);
        if (n.computed) this.visit(key, scope);
        if (
          !n.computed &&
          this.staticKey(key) === "__proto__" &&
          !n.shorthand &&
          !this.isNullLiteral(value)
        ) {
          this.flag("block-proto-access", "`__proto__` in an object literal (sets the prototype)", n);
        }
        if (!n.method && n.kind === "init") this.escape(value, scope);
        this.visit(value, scope);
        return;
      }
      case "MethodDefinition":
      case "PropertyDefinition": {
        if (n.computed) this.visit(node(n.key), scope);
        if (n.type === "PropertyDefinition") this.escape(node(n.value), scope);
        this.visit(node(n.value), scope);
        return;
      }
      case "ReturnStatement":
      case "ThrowStatement":
      case "YieldExpression":
      case "AwaitExpression":
      case "SpreadElement":
        this.escape(node(n.argument), scope);
        this.visit(node(n.argument), scope);
        return;
      case "ArrayExpression":
        for (const element of nodes(n.elements)) {
          this.escape(element, scope);
          this.visit(element, scope);
        }
        return;
      case "WithStatement":
        this.escape(node(n.object), scope);
        this.visitAll(children(n), scope);
        return;
      case "ImportExpression":
        this.flag("block-import-dynamic", "dynamic `import()`", n);
        this.visitAll(children(n), scope);
        return;
      case "ImportDeclaration":
        this.flag("block-import-dynamic", "`import` declaration", n);
        return;
      case "ExportAllDeclaration":
        this.flag("block-import-dynamic", "`export … from` (loads a module)", n);
        return;
      case "ExportNamedDeclaration":
        if (n.source) {
          this.flag("block-import-dynamic", "`export … from` (loads a module)", n);
          return;
        }
        this.visit(node(n.declaration), scope);
        return;
      default:
        this.visitAll(children(n), scope);
    }
  }

  private visitFunction(n: N, outer: Scope): void {
    const scope = this.scopes.get(n) ?? outer;
    for (const param of nodes(n.params)) this.visitPattern(param, scope, false, "declare");
    const body = node(n.body);
    if (!body) return;
    if (body.type === "BlockStatement") {
      this.visitAll(nodes(body.body), scope);
    } else {
      this.escape(body, scope);
      this.visit(body, scope);
    }
  }

  private visitDeclarator(declarator: N, scope: Scope, kind: string): void {
    const id = node(declarator.id);
    const init = node(declarator.init);
    this.visit(init, scope);
    const root = init !== undefined && this.isRoot(init, scope);
    if (id?.type === "Identifier" && init) {
      const binding = scope.lookup(id.name as string);
      if (binding) {
        if (root && !binding.root) {
          binding.root = true;
          this.changed = true;
        }
        if (kind === "const" && binding.constValue === UNKNOWN) {
          const value = this.fold(init, scope, 0);
          if (value !== UNKNOWN) {
            binding.constValue = value;
            this.changed = true;
          }
        }
      }
      return;
    }
    if (id?.type === "ArrayPattern") this.escape(init, scope);
    this.visitPattern(id, scope, root, "declare");
  }

  private visitAssignment(n: N, scope: Scope): void {
    const left = node(n.left);
    const right = node(n.right);
    this.visit(right, scope);
    const root = right !== undefined && n.operator === "=" && this.isRoot(right, scope);
    if (left?.type === "Identifier") {
      this.reference(left, scope);
      const binding = scope.lookup(left.name as string);
      if (binding && root && !binding.root) {
        binding.root = true;
        this.changed = true;
      }
      return;
    }
    if (left?.type === "MemberExpression" || left?.type === "ArrayPattern") this.escape(right, scope);
    this.visitPattern(left, scope, root, "assign");
  }

  private visitPattern(
    pattern: N | undefined,
    scope: Scope,
    sourceIsRoot: boolean,
    mode: "declare" | "assign",
  ): void {
    if (!pattern) return;
    switch (pattern.type) {
      case "Identifier": {
        if (mode === "assign") this.reference(pattern, scope);
        if (sourceIsRoot) {
          const binding = scope.lookup(pattern.name as string);
          if (binding && !binding.root) {
            binding.root = true;
            this.changed = true;
          }
        }
        return;
      }
      case "ObjectPattern":
        for (const prop of nodes(pattern.properties)) {
          if (prop.type === "RestElement") {
            if (sourceIsRoot) this.flag("block-global-this", "rest destructuring of the global object", prop);
            this.visitPattern(node(prop.argument), scope, false, mode);
            continue;
          }
          const key = node(prop.key);
          if (prop.computed) this.visit(key, scope);
          const name = prop.computed ? this.foldKey(key, scope) : this.staticKey(key);
          this.checkKey(name, sourceIsRoot, prop);
          this.visitPattern(
            node(prop.value),
            scope,
            sourceIsRoot && name !== undefined && ROOT_NAMES.has(name),
            mode,
          );
        }
        return;
      case "ArrayPattern":
        for (const element of nodes(pattern.elements)) this.visitPattern(element, scope, false, mode);
        return;
      case "AssignmentPattern": {
        const right = node(pattern.right);
        this.visit(right, scope);
        const rootDefault = right !== undefined && this.isRoot(right, scope);
        this.visitPattern(node(pattern.left), scope, sourceIsRoot || rootDefault, mode);
        return;
      }
      case "RestElement":
        this.visitPattern(node(pattern.argument), scope, false, mode);
        return;
      case "MemberExpression":
        this.visitMember(pattern, scope);
        return;
      default:
        this.visit(pattern, scope);
    }
  }

  private visitMember(n: N, scope: Scope): void {
    const object = node(n.object);
    const property = node(n.property);
    const name = n.computed ? this.foldKey(property, scope) : this.staticKey(property);
    const objectIsRoot = object !== undefined && this.isRoot(object, scope);
    this.checkKey(name, objectIsRoot, n);
    if (object?.type === "Identifier" && scope.lookup(object.name as string) === undefined) {
      const global = object.name as string;
      if ((global === "Object" || global === "Reflect") && name === "setPrototypeOf") {
        this.flag("block-proto-access", `\`${global}.setPrototypeOf\` (changes a prototype)`, n);
      }
      // `Function.prototype` and `Function.length` are inert; calling it is not.
      if (global === "Function" && name !== undefined && !FUNCTION_INVOKERS.has(name)) {
        if (n.computed) this.visit(property, scope);
        return;
      }
    }
    this.visit(object, scope);
    if (n.computed) this.visit(property, scope);
  }

  private visitCall(n: N, scope: Scope): void {
    const callee = node(n.callee);
    const args = nodes(n.arguments);
    const calleeName = this.calleeName(callee, scope);
    if (
      (calleeName === "setTimeout" || calleeName === "setInterval") &&
      args[0] &&
      this.stringy(args[0], scope)
    ) {
      this.flag("block-eval", `string passed to \`${calleeName}\` (evaluated as code)`, n);
    }
    if (callee?.type === "MemberExpression") {
      const owner = node(callee.object);
      const method = callee.computed
        ? this.foldKey(node(callee.property), scope)
        : this.staticKey(node(callee.property));
      const ownerName =
        owner?.type === "Identifier" && scope.lookup(owner.name as string) === undefined
          ? (owner.name as string)
          : undefined;
      if ((ownerName === "Reflect" || ownerName === "Object") && method && REFLECTIVE_KEYED.has(method)) {
        const target = args[0];
        const key = args[1] ? this.foldKey(args[1], scope) : undefined;
        this.checkKey(key, target !== undefined && this.isRoot(target, scope), n);
      }
    }
    for (const arg of args) this.escape(arg, scope);
    this.visit(callee, scope);
    this.visitAll(args, scope);
  }

  /** The global function a callee names (`setTimeout`, `globalThis.setTimeout`), if any. */
  private calleeName(callee: N | undefined, scope: Scope): string | undefined {
    if (!callee) return undefined;
    if (callee.type === "Identifier") {
      return scope.lookup(callee.name as string) === undefined ? (callee.name as string) : undefined;
    }
    if (callee.type === "MemberExpression") {
      const object = node(callee.object);
      if (object && this.isRoot(object, scope)) {
        return callee.computed
          ? this.foldKey(node(callee.property), scope)
          : this.staticKey(node(callee.property));
      }
    }
    return undefined;
  }

  /** Rules keyed on a property name read from some object (or from the global object). */
  private checkKey(name: string | undefined, onRoot: boolean, at: N): void {
    if (name === "constructor") this.flag("block-constructor-access", "access to `.constructor`", at);
    if (name !== undefined && PROTO_NAMES.has(name))
      this.flag("block-proto-access", `access to \`${name}\``, at);
    if (!onRoot) return;
    if (name === undefined) {
      this.flag("block-global-this", "dynamic property access on the global object", at);
      return;
    }
    const rule = DANGEROUS_GLOBALS.get(name);
    if (rule) this.flag(rule, `access to \`${name}\` through the global object`, at);
  }

  private reference(id: N, scope: Scope): void {
    const name = id.name as string;
    if (scope.lookup(name) !== undefined) return;
    const rule = DANGEROUS_GLOBALS.get(name);
    if (!rule) return;
    this.flag(rule, name === "Function" ? "use of the `Function` constructor" : `access to \`${name}\``, id);
  }

  /** Flag `value` when it is the global object used as a value the analysis cannot follow. */
  private escape(value: N | undefined, scope: Scope): void {
    if (value && this.isRoot(value, scope)) {
      this.flag("block-global-this", "the global object is passed on as a value", value);
    }
  }

  /** True when `n` may evaluate to the global object. */
  private isRoot(n: N, scope: Scope, depth = 0): boolean {
    if (depth > MAX_FOLD_DEPTH) return false;
    switch (n.type) {
      case "Identifier": {
        const binding = scope.lookup(n.name as string);
        return binding ? binding.root : ROOT_NAMES.has(n.name as string);
      }
      case "ThisExpression":
        return scope.functionScope().thisIsRoot;
      case "MemberExpression": {
        const object = node(n.object);
        if (!object || !this.isRoot(object, scope, depth + 1)) return false;
        const name = n.computed ? this.foldKey(node(n.property), scope) : this.staticKey(node(n.property));
        return name !== undefined && ROOT_NAMES.has(name);
      }
      case "ChainExpression":
      case "ParenthesizedExpression":
        return this.isRootNode(node(n.expression), scope, depth);
      case "SequenceExpression":
        return this.isRootNode(nodes(n.expressions).at(-1), scope, depth);
      case "ConditionalExpression":
        return (
          this.isRootNode(node(n.consequent), scope, depth) ||
          this.isRootNode(node(n.alternate), scope, depth)
        );
      case "LogicalExpression":
        return this.isRootNode(node(n.left), scope, depth) || this.isRootNode(node(n.right), scope, depth);
      case "AssignmentExpression":
        return this.isRootNode(node(n.right), scope, depth);
      default:
        return false;
    }
  }

  private isRootNode(n: N | undefined, scope: Scope, depth: number): boolean {
    return n !== undefined && this.isRoot(n, scope, depth + 1);
  }

  private staticKey(key: N | undefined): string | undefined {
    if (!key) return undefined;
    if (key.type === "Identifier") return key.name as string;
    if (key.type === "Literal") return String(key.value);
    return undefined;
  }

  private isNullLiteral(n: N | undefined): boolean {
    return n?.type === "Literal" && n.value === null;
  }

  /** A computed key as a string, when it folds to a constant. */
  private foldKey(key: N | undefined, scope: Scope): string | undefined {
    if (!key) return undefined;
    const value = this.fold(key, scope, 0);
    if (value === UNKNOWN) return undefined;
    return Array.isArray(value) ? value.join(",") : String(value);
  }

  private truthy(test: N, scope: Scope): boolean {
    const value = this.fold(test, scope, 0);
    return value !== UNKNOWN && Boolean(value);
  }

  /** True when `n` is visibly a string (for `setTimeout("code")`). */
  private stringy(n: N, scope: Scope): boolean {
    if (n.type === "TemplateLiteral") return true;
    if (n.type === "BinaryExpression" && n.operator === "+") {
      const left = node(n.left);
      const right = node(n.right);
      return (
        (left !== undefined && this.stringy(left, scope)) ||
        (right !== undefined && this.stringy(right, scope))
      );
    }
    return typeof this.fold(n, scope, 0) === "string";
  }

  /** Evaluate `n` when it is a constant expression over literals and `const` bindings. */
  private fold(n: N, scope: Scope, depth: number): Folded {
    if (depth > MAX_FOLD_DEPTH) return UNKNOWN;
    const sub = (child: unknown): Folded => (isNode(child) ? this.fold(child, scope, depth + 1) : UNKNOWN);
    switch (n.type) {
      case "Literal":
        return n.regex || typeof n.value === "bigint" ? UNKNOWN : (n.value as Constant);
      case "TemplateLiteral": {
        const quasis = nodes(n.quasis);
        const expressions = nodes(n.expressions);
        let text = "";
        for (let i = 0; i < quasis.length; i++) {
          const cooked = (quasis[i]?.value as { cooked?: string | null } | undefined)?.cooked;
          if (typeof cooked !== "string") return UNKNOWN;
          text += cooked;
          if (i < expressions.length) {
            const value = sub(expressions[i]);
            if (value === UNKNOWN) return UNKNOWN;
            text += String(value);
          }
        }
        return text;
      }
      case "Identifier": {
        const binding = scope.lookup(n.name as string);
        if (binding) return binding.isConst ? binding.constValue : UNKNOWN;
        return n.name === "undefined" ? undefined : UNKNOWN;
      }
      case "BinaryExpression": {
        if (n.operator !== "+") return UNKNOWN;
        const left = sub(n.left);
        const right = sub(n.right);
        if (left === UNKNOWN || right === UNKNOWN || Array.isArray(left) || Array.isArray(right))
          return UNKNOWN;
        return (left as string) + (right as string);
      }
      case "UnaryExpression": {
        const value = sub(n.argument);
        if (value === UNKNOWN) return UNKNOWN;
        if (n.operator === "!") return !value;
        if (n.operator === "void") return undefined;
        return UNKNOWN;
      }
      case "SequenceExpression":
        return sub(nodes(n.expressions).at(-1));
      case "ChainExpression":
      case "ParenthesizedExpression":
        return sub(n.expression);
      case "ArrayExpression": {
        const out: Constant[] = [];
        for (const element of n.elements as unknown[]) {
          const value = sub(element);
          if (value === UNKNOWN) return UNKNOWN;
          out.push(value);
        }
        return out;
      }
      case "CallExpression":
        return this.foldCall(n, scope, depth);
      default:
        return UNKNOWN;
    }
  }

  private foldCall(n: N, scope: Scope, depth: number): Folded {
    const callee = node(n.callee);
    if (!callee) return UNKNOWN;
    const args: Constant[] = [];
    for (const arg of nodes(n.arguments)) {
      if (arg.type === "SpreadElement") return UNKNOWN;
      const value = this.fold(arg, scope, depth + 1);
      if (value === UNKNOWN) return UNKNOWN;
      args.push(value);
    }
    if (callee.type === "Identifier" && callee.name === "String" && scope.lookup("String") === undefined) {
      return args.length === 0 ? "" : String(args[0]);
    }
    if (callee.type !== "MemberExpression") return UNKNOWN;
    const method = callee.computed
      ? this.foldKey(node(callee.property), scope)
      : this.staticKey(node(callee.property));
    if (method === undefined) return UNKNOWN;
    const object = node(callee.object);
    if (!object) return UNKNOWN;
    if (object.type === "Identifier" && object.name === "String" && scope.lookup("String") === undefined) {
      if (method === "fromCharCode" || method === "fromCodePoint") {
        if (!args.every((a) => typeof a === "number")) return UNKNOWN;
        try {
          return method === "fromCharCode"
            ? String.fromCharCode(...(args as number[]))
            : String.fromCodePoint(...(args as number[]));
        } catch {
          return UNKNOWN;
        }
      }
      return UNKNOWN;
    }
    const target = this.fold(object, scope, depth + 1);
    if (target === UNKNOWN) return UNKNOWN;
    try {
      if (typeof target === "string" && STRING_METHODS.has(method)) {
        const fn = (String.prototype as unknown as Record<string, (...a: unknown[]) => Constant>)[method];
        return fn ? Reflect.apply(fn, target, args) : UNKNOWN;
      }
      if (Array.isArray(target) && ARRAY_METHODS.has(method)) {
        const copy = [...target];
        const fn = (Array.prototype as unknown as Record<string, (...a: unknown[]) => Constant>)[method];
        return fn ? Reflect.apply(fn, copy, args) : UNKNOWN;
      }
    } catch {
      return UNKNOWN;
    }
    return UNKNOWN;
  }

  /** True when the loop body can leave the loop: an unlabelled break at its level, a break to a label outside the body, return or throw. */
  private hasExit(body: N | undefined): boolean {
    const search = (n: N, nested: boolean, inner: ReadonlySet<string>): boolean => {
      switch (n.type) {
        case "FunctionDeclaration":
        case "FunctionExpression":
        case "ArrowFunctionExpression":
        case "ClassDeclaration":
        case "ClassExpression":
          return false;
        case "ReturnStatement":
        case "ThrowStatement":
          return true;
        case "BreakStatement": {
          const label = node(n.label);
          return label ? !inner.has(label.name as string) : !nested;
        }
        case "LabeledStatement": {
          const label = node(n.label);
          const body = node(n.body);
          const names = label ? new Set([...inner, label.name as string]) : inner;
          return body !== undefined && search(body, nested, names);
        }
        case "SwitchStatement":
          return children(n).some((child) => search(child, true, inner));
        default:
          return children(n).some((child) => search(child, nested || isLoop(n), inner));
      }
    };
    return body !== undefined && search(body, false, new Set());
  }
}
