import { spawn } from "node:child_process";
import { once } from "node:events";
import { readFileSync } from "node:fs";
import { builtinModules } from "node:module";
import type { Readable } from "node:stream";
import { parseEngineLimits } from "@suaveplan/sandbox-core/schemas";
import { buildExecutionRequest, createHostCodec, ModuleRegistry } from "@suaveplan/sandbox-guest";
import { describe, expect, it } from "vitest";
import { SpawnEngine } from "../src/index.js";
import { buildChildArgs } from "../src/internal/node-args.js";

// The built `dist/runner-main.js` (`pnpm build` first; turbo's test task does): the one file the
// child may read, with the shared guest runtime bundled in.

const runnerPath = new SpawnEngine({ preStart: false }).getRunnerPath();
const bundle = readFileSync(runnerPath, "utf8");

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
    const built = buildExecutionRequest(
      "console.log('%s', 'fmt', { when }); await new Promise((done) => setTimeout(done, 5)); [when, new Set([1n]), lib.where()]",
      { when: new Date(3) },
      undefined,
      parseEngineLimits(),
      modules,
    );
    if (!built.ok) throw new Error(built.result.error);
    const child = spawn(process.execPath, buildChildArgs(runnerPath, 64 * 1024 * 1024), {
      stdio: ["pipe", "ignore", "pipe", "pipe"],
      env: {},
    });
    const protocol: Buffer[] = [];
    const stderr: Buffer[] = [];
    (child.stdio[3] as Readable).on("data", (chunk: Buffer) => protocol.push(chunk));
    child.stderr?.on("data", (chunk: Buffer) => stderr.push(chunk));
    child.stdin?.end(`${JSON.stringify(built.request)}\n`);
    const [code] = await once(child, "close");
    const frames = Buffer.concat(protocol)
      .toString("utf8")
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as { type: string; outcome?: { kind: string; text?: string } });
    expect({
      code,
      stderr: Buffer.concat(stderr).toString("utf8"),
      types: frames.map((frame) => frame.type),
    }).toEqual({
      code: 0,
      stderr: "",
      types: ["start", "log", "done"],
    });
    expect(frames[1]).toStrictEqual({
      type: "log",
      level: "log",
      message: "fmt { when: 1970-01-01T00:00:00.003Z }",
    });
    expect(createHostCodec().decode(frames[2]?.outcome?.text ?? "")).toStrictEqual([
      new Date(3),
      new Set([1n]),
      "Error: m\n    at where (sandbox-module:lib:1:37)\n    at sandbox.js:1:113",
    ]);
  });
});
