import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { SAND_VM_CODES, VmSandboxError } from "../errors/sand-vm-codes.js";

/**
 * The built worker entry (`dist/vm-worker.js`). From `dist/*.js` it is a sibling; when this
 * module runs from `src/sandbox/*.ts` (tests, source-first typecheck) it falls back to the
 * package's `dist/`, so run `pnpm build` before the tests.
 */
export function vmWorkerUrl(): URL {
  const candidates = [
    new URL("./vm-worker.js", import.meta.url),
    new URL("../../dist/vm-worker.js", import.meta.url),
  ];
  for (const candidate of candidates) {
    if (existsSync(fileURLToPath(candidate))) return candidate;
  }
  throw new VmSandboxError(
    SAND_VM_CODES.WORKER_FAILED,
    "the vm worker entry (dist/vm-worker.js) was not found; build @suaveplan/api-sandbox-vm first (pnpm build)",
  );
}
