import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

// The built engine in a real Node process with Node's default --unhandled-rejections mode:
// a guest's rejection must fail its run and leave the host alive; a host rejection keeps Node's behaviour.
const dist = fileURLToPath(new URL("../dist/index.js", import.meta.url));

function runHost(body: string) {
  const script = `import { VmEngine } from ${JSON.stringify(dist)};\nconst engine = new VmEngine();\n${body}`;
  const child = spawnSync(process.execPath, ["--input-type=module", "-e", script], {
    encoding: "utf8",
    timeout: 20_000,
  });
  return { status: child.status, stdout: child.stdout.trim(), stderr: child.stderr };
}

describe("a guest's unhandled rejection on the vm engine", () => {
  it.each([
    ["a throwing promise executor", "new Promise((ok, no) => { throw new Error('boom'); }); 1"],
    ["an async function nobody awaits", "(async () => { throw new Error('boom'); })(); 1"],
    ["an async generator", "(async function* () { throw new Error('boom'); })().next(); 1"],
    ["Promise.reject", "Promise.reject(new Error('boom')); 1"],
  ])("%s fails the run and the host process lives on", (_label, code) => {
    const run = runHost(
      `const r = await engine.execute(${JSON.stringify(code)});\nconsole.log(JSON.stringify([r.success, r.errorCode, r.error.split(" (line")[0]]));\nawait engine.destroy();\nsetTimeout(() => console.log("alive"), 20);`,
    );
    expect(run).toMatchObject({ status: 0 });
    expect(run.stdout.split("\n")).toEqual([
      JSON.stringify([false, "SANDBOX_GUEST_ERROR", "Unhandled promise rejection: Error: boom"]),
      "alive",
    ]);
  });

  it("a host rejection during a run still ends the process as Node's default mode does", () => {
    const run = runHost(
      `const pending = engine.execute("new Promise((r) => setTimeout(r, 100))");\nPromise.reject(new Error("host bug"));\nawait pending;\nconsole.log("not reached");`,
    );
    expect(run.status).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr).toContain("Error: host bug");
  });
});
