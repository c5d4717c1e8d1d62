import type { EngineCapabilities, MemoryKind, MemoryLimitMode } from "../types/sandbox-types.js";

/** How a bomb allocates: in one synchronous stretch, or yielding to a timer between chunks. */
export type BombPace = "sync" | "yielding";

/**
 * One memory bomb of the conformance table: guest code that allocates one
 * kind of memory in 4 MiB chunks, up to 8 × `memoryLimit` (so an engine that
 * misses it fails the assertion, with a result of `"not stopped"`, instead of
 * exhausting the machine). Where the realm lacks the constructor the code
 * resolves `"absent"`, which passes: there is nothing to allocate that way.
 */
export interface MemoryBombRow {
  /** The kind of memory it allocates. */
  readonly kind: MemoryKind;
  /** Whether it yields between chunks. */
  readonly pace: BombPace;
  /** Guest code for a limit of `limitBytes`. */
  code(limitBytes: number): string;
}

const CHUNK = 4 * 1024 * 1024;

/** One chunk of each kind, as a guest statement run with the loop index `i`. */
const ALLOCATE: Readonly<Record<MemoryKind, { guard: string; chunk: string }>> = {
  heap: { guard: "true", chunk: `hoard.push(new Array(${CHUNK / 8}).fill(i + 0.5));` },
  // `repeat` builds a rope of a few nodes; reading a character flattens it into CHUNK bytes.
  strings: {
    guard: "true",
    chunk: `const text = String(i % 10).repeat(${CHUNK}); text.charCodeAt(1); hoard.push(text);`,
  },
  arrayBuffers: { guard: "true", chunk: `hoard.push(new Uint8Array(${CHUNK}).fill(1));` },
  sharedArrayBuffers: {
    guard: "typeof SharedArrayBuffer === 'function'",
    chunk: `hoard.push(new Uint8Array(new SharedArrayBuffer(${CHUNK})).fill(1));`,
  },
  wasmMemory: {
    guard: "typeof WebAssembly === 'object' && typeof WebAssembly.Memory === 'function'",
    chunk: `memory.grow(${CHUNK / 65_536}); new Uint8Array(memory.buffer, i * ${CHUNK}, ${CHUNK}).fill(1);`,
  },
};

function bomb(kind: MemoryKind, pace: BombPace): MemoryBombRow {
  const { guard, chunk } = ALLOCATE[kind];
  return {
    kind,
    pace,
    code(limitBytes) {
      const chunks = Math.ceil((8 * limitBytes) / CHUNK);
      const memory =
        kind === "wasmMemory"
          ? `const memory = new WebAssembly.Memory({ initial: 0, maximum: ${(chunks * CHUNK) / 65_536} });`
          : "";
      const pause = pace === "yielding" ? " await new Promise((resolve) => setTimeout(resolve, 1));" : "";
      return `let outcome = "absent"; if (${guard}) { const hoard = []; ${memory} for (let i = 0; i < ${chunks}; i++) { ${chunk}${pause} } outcome = "not stopped"; } outcome`;
    },
  };
}

const KINDS: readonly MemoryKind[] = ["heap", "strings", "arrayBuffers", "sharedArrayBuffers", "wasmMemory"];

/** Every kind of memory, allocated synchronously and yielding: the table every engine runs. */
export const MEMORY_BOMB_ROWS: readonly MemoryBombRow[] = Object.freeze(
  KINDS.flatMap((kind) => [bomb(kind, "sync"), bomb(kind, "yielding")]),
);

/**
 * The outcome an engine must give a bomb, read from its declared
 * `capabilities.memoryAccounting` (never from its name): `"exceeded"` —
 * `SANDBOX_MEMORY_EXCEEDED` (or `"absent"` where the realm lacks the
 * constructor); `undefined` — the engine does not claim to bound it, the row
 * is skipped. A synchronous bomb is bounded only by `"allocation"` and
 * `"sampled"`; a yielding one also by `"yields"`. An engine without
 * `memoryAccounting` is held only to the heap, and only when it declares
 * `enforcesMemoryLimit`.
 */
export function expectedBombOutcome(
  row: MemoryBombRow,
  capabilities: EngineCapabilities,
): "exceeded" | undefined {
  const accounting = capabilities.memoryAccounting;
  const mode: MemoryLimitMode =
    accounting === undefined
      ? row.kind === "heap" && capabilities.enforcesMemoryLimit
        ? "allocation"
        : false
      : accounting.kinds[row.kind];
  if (mode === "allocation" || mode === "sampled") return "exceeded";
  if (mode === "yields" && row.pace === "yielding") return "exceeded";
  return undefined;
}
