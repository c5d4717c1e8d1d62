// The typecheck child: the TypeScript compiler in a node process of its own,
// under `--max-old-space-size`. Its own build entry, started by
// createTypechecker with new URL("./typecheck-child.js", import.meta.url).
// A process, not a worker thread: a type that grows strings past the heap
// limit (template-literal doubling) makes V8 abort the whole process it runs
// in, which a worker's resourceLimits cannot prevent (nodejs/node#47224).
import type * as TS from "typescript";
import type { CheckRequest } from "./internal/check-program.js";
import { createProgramChecker } from "./internal/check-program.js";

type Incoming = CheckRequest & { id: number };

function send(message: unknown): void {
  // The host went away: the `disconnect` handler ends this process.
  if (process.connected) process.send?.(message);
}

async function main(): Promise<void> {
  if (process.send === undefined) return;
  // Children die with their parent: no host, no work.
  process.on("disconnect", () => process.exit(0));
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
  process.on("message", (message: Incoming) => {
    if (check === undefined) {
      send({ id: message.id, unavailable });
      return;
    }
    try {
      send({ id: message.id, diagnostics: check(message) });
    } catch (error) {
      // Only the error's name crosses: a compiler crash message may carry host paths.
      send({ id: message.id, failed: error instanceof Error ? error.name : "a non-error value" });
    }
  });
  send({ ready: true });
}

void main();
