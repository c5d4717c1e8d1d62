import { dirname } from "node:path";
import type { TypecheckDiagnostic } from "@suaveplan/sandbox-core/types";
import type * as TS from "typescript";
import { GUEST_GLOBALS } from "./guest-globals.js";

/** One check: the guest's TypeScript and the declarations of what it may use (tools, context globals). */
export interface CheckRequest {
  code: string;
  declarations: string;
}

const GUEST_FILE = "/sandbox/guest.ts";
const GLOBALS_FILE = "/sandbox/globals.d.ts";
/** Top-level `return` is allowed in guest code (it ends the run with that value). */
const IGNORED_CODES = new Set([1108]);
/** The ECMAScript library the guest realms have (Node 20's V8); no DOM, no Node types. */
const LIB = ["lib.es2023.d.ts"];
const MAX_CACHED_DECLARATIONS = 16;

/**
 * The TypeScript compiler with what can outlive one check: the parsed
 * library files (the expensive part, parsed once) and the parsed
 * declarations per tool set (least recently used first out).
 */
export function createProgramChecker(ts: typeof TS): (request: CheckRequest) => TypecheckDiagnostic[] {
  const options: TS.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    lib: LIB,
    types: [],
    strict: true,
    noEmit: true,
    noResolve: true,
    skipLibCheck: true,
    allowUnreachableCode: true,
    moduleDetection: ts.ModuleDetectionKind.Auto,
  };
  const libDir = dirname(ts.getDefaultLibFilePath(options));
  const libFiles = new Map<string, TS.SourceFile | undefined>();
  const declarationFiles = new Map<string, TS.SourceFile>();
  let oldProgram: TS.Program | undefined;

  const libFile = (fileName: string): TS.SourceFile | undefined => {
    if (libFiles.has(fileName)) return libFiles.get(fileName);
    const text = ts.sys.readFile(fileName);
    const file =
      text === undefined ? undefined : ts.createSourceFile(fileName, text, ts.ScriptTarget.ES2022, false);
    libFiles.set(fileName, file);
    return file;
  };
  const declarationsFile = (text: string): TS.SourceFile => {
    let file = declarationFiles.get(text);
    if (file !== undefined) {
      declarationFiles.delete(text);
    } else {
      file = ts.createSourceFile(GLOBALS_FILE, text, ts.ScriptTarget.ES2022, false);
      if (declarationFiles.size >= MAX_CACHED_DECLARATIONS) {
        const oldest = declarationFiles.keys().next().value;
        if (oldest !== undefined) declarationFiles.delete(oldest);
      }
    }
    declarationFiles.set(text, file);
    return file;
  };

  return ({ code, declarations }) => {
    // A trailing `export {}` makes the snippet a module (top-level await type-checks, its
    // bindings stay its own) without moving any position of the code itself.
    const guest = ts.createSourceFile(GUEST_FILE, `${code}\nexport {};\n`, ts.ScriptTarget.ES2022, true);
    const globals = declarationsFile(`${GUEST_GLOBALS}\n${declarations}`);
    const host: TS.CompilerHost = {
      getSourceFile: (fileName) => {
        if (fileName === GUEST_FILE) return guest;
        if (fileName === GLOBALS_FILE) return globals;
        return libFile(fileName);
      },
      getDefaultLibFileName: (o) => ts.getDefaultLibFilePath(o),
      getDefaultLibLocation: () => libDir,
      writeFile: () => undefined,
      getCurrentDirectory: () => "/sandbox",
      getCanonicalFileName: (fileName) => fileName,
      useCaseSensitiveFileNames: () => true,
      getNewLine: () => "\n",
      fileExists: (fileName) =>
        fileName === GUEST_FILE || fileName === GLOBALS_FILE || ts.sys.fileExists(fileName),
      readFile: (fileName) => ts.sys.readFile(fileName),
    };
    const program = ts.createProgram({
      rootNames: [GLOBALS_FILE, GUEST_FILE],
      options,
      host,
      ...(oldProgram === undefined ? {} : { oldProgram }),
    });
    oldProgram = program;
    const found = [...program.getSyntacticDiagnostics(guest), ...program.getSemanticDiagnostics(guest)];
    return found
      .filter((d) => d.file === guest && d.start !== undefined && !IGNORED_CODES.has(d.code))
      .map((d) => {
        const { line, character } = guest.getLineAndCharacterOfPosition(d.start ?? 0);
        return {
          line: line + 1,
          column: character + 1,
          message: ts.flattenDiagnosticMessageText(d.messageText, "\n"),
          code: d.code,
        };
      });
  };
}
