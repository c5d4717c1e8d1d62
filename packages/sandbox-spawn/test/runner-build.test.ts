import { spawn } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { builtinModules } from "node:module";
import type { Readable } from "node:stream";
import { parseEngineLimits } from "@suaveplan/sandbox-core/schemas";
import {
  buildExecutionRequest,
  createHostCodec,
  ModuleRegistry,
  newKernelBinding,
} from "@suaveplan/sandbox-guest";
import { describe, expect, it } from "vitest";
import { SpawnEngine } from "../src/index.js";
import { buildChildArgs, type ChildArgOptions } from "../src/internal/node-args.js";

// The built `dist/runner-main.js` (`pnpm build` first; turbo's test task does): the one file the
// child may read, with the shared guest runtime bundled in.

const runnerPath = new SpawnEngine({ preStart: false }).getRunnerPath();
const bundle = readFileSync(runnerPath, "utf8");

interface Frame {
  type: string;
  outcome?: { kind: string; text?: string };
}

/** Run `code` in a child started with these runner options: its exit code, stderr and frames. */
async function runChild(
  code: string,
  options: ChildArgOptions,
  input: { context?: Record<string, unknown>; modules?: ModuleRegistry } = {},
) {
  const built = buildExecutionRequest(
    code,
    input.context,
    undefined,
    parseEngineLimits(),
    input.modules ?? new ModuleRegistry(),
  );
  if (!built.ok) throw new Error(built.result.error);
  const child = spawn(process.execPath, buildChildArgs(runnerPath, 64 * 1024 * 1024, options), {
    stdio: ["pipe", "ignore", "pipe", "pipe"],
    env: {},
  });
  const protocol: Buffer[] = [];
  const stderr: Buffer[] = [];
  (child.stdio[3] as Readable).on("data", (chunk: Buffer) => protocol.push(chunk));
  child.stderr?.on("data", (chunk: Buffer) => stderr.push(chunk));
  child.stdin?.end(`${JSON.stringify(built.request)}\n`);
  const [exitCode] = await once(child, "close");
  const frames = Buffer.concat(protocol)
    .toString("utf8")
    .trimEnd()
    .split("\n")
    .map((line) => JSON.parse(line) as Frame);
  return { code: exitCode as number | null, stderr: Buffer.concat(stderr).toString("utf8"), frames };
}

/** The last frame's value, decoded (or its outcome when it is no value). */
function resultOf(frames: readonly Frame[]): unknown {
  const done = frames.at(-1)?.outcome;
  return done?.kind === "value" ? createHostCodec().decode(done.text ?? "") : done;
}

describe("the built runner-main", () => {
  it("is one self-contained file: it imports only Node built-ins", () => {
    const specifiers = [...bundle.matchAll(/^import\s[^;]*?from\s+['"]([^'"]+)['"]/gm)].map(
      (match) => match[1],
    );
    expect(specifiers.length).toBeGreaterThan(0);
    expect(specifiers.filter((name) => !builtinModules.includes((name ?? "").replace(/^node:/, "")))).toEqual(
      [],
    );
    expect(bundle).not.toMatch(/@suaveplan\//);
  });

  it("loads only the built-ins a run needs: no crypto, no perf_hooks, and no parser (the host prepares the code)", () => {
    const specifiers = [...bundle.matchAll(/^import\s[^;]*?from\s+['"]([^'"]+)['"]/gm)].map(
      (match) => match[1],
    );
    expect(specifiers.sort()).toEqual(["fs", "string_decoder", "url", "util", "v8", "vm"]);
    expect(bundle).not.toMatch(/acorn|function wordsRegexp/);
  });

  it("names its kernel as the host says, and answers without the warm-up run when told to", async () => {
    const binding = newKernelBinding();
    // Guest code that knew the name could reach the kernel: only the host and the child know it.
    const probe = `[typeof ${binding}, 2 + 3]`;
    const seen = await Promise.all([
      runChild(probe, { kernelBinding: binding, warmUp: false }),
      runChild(probe, {}),
    ]);
    expect(
      seen.map(({ code, stderr, frames }) => ({
        code,
        stderr,
        types: frames.map((frame) => frame.type),
        value: resultOf(frames),
      })),
    ).toEqual([
      { code: 0, stderr: "", types: ["start", "done"], value: ["object", 5] },
      { code: 0, stderr: "", types: ["start", "done"], value: ["undefined", 5] },
    ]);
  });

  it("carries no bundler helper the stringified kernel parts could call (no __name, no keepNames)", () => {
    expect(bundle.match(/\b__(name|defProp|publicField|require|toESM|commonJS|export)\b/g)).toBeNull();
    expect(bundle).toContain("function installInspect(kit)");
  });

  it("runs every kernel part under the permission model, reading nothing but itself", async () => {
    const modules = new ModuleRegistry();
    modules.register({
      name: "lib",
      source: "module.exports = { where() { return new Error('m').stack; } };",
    });
    const { code, stderr, frames } = await runChild(
      "console.log('%s', 'fmt', { when }); await new Promise((done) => setTimeout(done, 5)); [when, new Set([1n]), lib.where()]",
      {},
      { context: { when: new Date(3) }, modules },
    );
    expect({ code, stderr, types: frames.map((frame) => frame.type) }).toEqual({
      code: 0,
      stderr: "",
      types: ["start", "log", "done"],
    });
    expect(frames[1]).toStrictEqual({
      type: "log",
      level: "log",
      message: "fmt { when: 1970-01-01T00:00:00.003Z }",
    });
    expect(resultOf(frames)).toStrictEqual([
      new Date(3),
      new Set([1n]),
      "Error: m\n    at where (sandbox-module:lib:1:37)\n    at sandbox.js:1:113",
    ]);
  });
});
