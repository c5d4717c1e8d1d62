// The typecheck worker: the TypeScript compiler off the caller's thread. Its
// own build entry, started by createTypechecker with
// new URL("./typecheck-worker.js", import.meta.url).
import { parentPort } from "node:worker_threads";
import type * as TS from "typescript";
import type { CheckRequest } from "./internal/check-program.js";
import { createProgramChecker } from "./internal/check-program.js";

type Incoming = CheckRequest & { id: number };

async function main(): Promise<void> {
  const port = parentPort;
  if (port === null) return;
  let check: ((request: CheckRequest) => unknown) | undefined;
  let unavailable: string | undefined;
  try {
    // typescript is CommonJS: its namespace arrives as the default export.
    const loaded = (await import("typescript")) as typeof TS & { default?: typeof TS };
    const ts = loaded.default ?? loaded;
    check = createProgramChecker(ts);
  } catch {
    unavailable =
      "typecheck needs the typescript package (an optional peer dependency of @suaveplan/sandbox-typescript); install typescript";
  }
  port.on("message", (message: Incoming) => {
    if (check === undefined) {
      port.postMessage({ id: message.id, unavailable });
      return;
    }
    try {
      port.postMessage({ id: message.id, diagnostics: check(message) });
    } catch (error) {
      // Only the error's name crosses: a compiler crash message may carry host paths.
      port.postMessage({ id: message.id, failed: error instanceof Error ? error.name : "a non-error value" });
    }
  });
  port.postMessage({ ready: true });
}

void main();
