import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

// A real node process on the built package (`pnpm build` first): an engine that is never
// destroyed must not keep it alive once its runs are over, and must keep it alive while one runs.

const entry = fileURLToPath(new URL("../dist/index.js", import.meta.url));
/** Far above the ~0.5 s such an app takes, so a loaded machine does not fail it; a hang hits it. */
const EXIT_WITHIN_MS = 15_000;

/** Run `body` as an ES module importing `WorkerEngine`; its exit code, signal and output. */
function runApp(body: string): Promise<{ status: number | null; signal: string | null; stdout: string }> {
  const script = `import { WorkerEngine } from ${JSON.stringify(entry)};\n${body}`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
      stdio: ["ignore", "pipe", "ignore"],
      timeout: EXIT_WITHIN_MS,
    });
    let stdout = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      stdout += chunk;
    });
    child.on("error", reject);
    child.on("close", (status, signal) => resolve({ status, signal, stdout }));
  });
}

describe("an engine that is never destroyed", () => {
  it.each([
    ["single-use workers, with the spare booted after the run", "new WorkerEngine()"],
    ["the reuse tier, with its idle workers", "new WorkerEngine({ reuse: { workers: 2 } })"],
  ])("lets the process exit on its own: %s", async (_name, make) => {
    const app = await runApp(`const engine = ${make};
const results = await Promise.all([engine.execute("1 + 2"), engine.execute("6 * 7")]);
console.log(results.map((r) => r.result).join(" "));
// Time for the next spare to start (an idle worker that is alive, not only a pending timer).
await new Promise((resolve) => setTimeout(resolve, 300));
console.log("idle");`);
    expect(app).toEqual({ status: 0, signal: null, stdout: "3 42\nidle\n" });
  });

  it("keeps the process alive while a run is in flight (a guest timer), then lets it exit", async () => {
    const app = await runApp(`const engine = new WorkerEngine();
engine.execute("new Promise((resolve) => setTimeout(() => resolve('late'), 300))").then((r) => console.log(r.result));`);
    expect(app).toEqual({ status: 0, signal: null, stdout: "late\n" });
  });
});
