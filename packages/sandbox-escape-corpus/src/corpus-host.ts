import { randomUUID } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { inspect } from "node:util";
import { z } from "zod";

/** The env variable the host sets to a fresh secret before any engine starts. */
export const SECRET_NAME = "SUAVEPLAN_ESCAPE_SECRET";

/** What a snippet that reached a Node `process` puts in its result (see the prelude's `pwn`). */
export const REACHED_MARKER = "REACHED_PROCESS";

/** What the host watches while the corpus runs. */
export interface CorpusHost {
  /** The secret value (in `process.env[SECRET_NAME]`). */
  readonly secret: string;
  /** The path an escape would write; it must never exist. */
  readonly canaryPath: string;
  /** Host tools for the tools column and the plugin host. */
  readonly tools: ReturnType<typeof corpusTools>;
  /** How many `slow` tool calls saw their abort signal fire. */
  abortedSlowCalls(): number;
  /** Everything the host can see of one run, judged: escaped, polluted, reached, or clean. */
  judge(seen: readonly unknown[]): HostFindings;
  /** Restore `process.env` and remove the canary folder. */
  dispose(): void;
}

/** What the host found after one run. */
export interface HostFindings {
  /** The secret appeared in something the host saw, or the canary exists. */
  readonly escaped: boolean;
  /** A host intrinsic prototype gained, lost or changed an own property. */
  readonly hostPolluted: string[];
  /** A snippet reported reaching a Node `process` (any process: host, worker or child). */
  readonly reachedProcess: boolean;
}

/** Own keys and value identities of the host's intrinsic prototypes (to see pollution). */
function snapshotIntrinsics(): Map<string, unknown> {
  const snapshot = new Map<string, unknown>();
  const owners: [string, object][] = [
    ["Object.prototype", Object.prototype],
    ["Array.prototype", Array.prototype],
    ["Function.prototype", Function.prototype],
    ["Promise.prototype", Promise.prototype],
    ["Error.prototype", Error.prototype],
    ["String.prototype", String.prototype],
    ["JSON", JSON],
    ["Promise", Promise],
    ["Reflect", Reflect],
    ["Object", Object],
  ];
  for (const [label, owner] of owners) {
    for (const key of Reflect.ownKeys(owner)) {
      const descriptor = Reflect.getOwnPropertyDescriptor(owner, key);
      snapshot.set(`${label}.${String(key)}`, descriptor?.value ?? descriptor?.get);
    }
  }
  return snapshot;
}

/** The host tools every tools-column run and every plugin run gets. */
function corpusTools(onAbort: () => void) {
  return {
    echo: {
      description: "Returns its input",
      inputSchema: z.object({ value: z.unknown() }),
      execute: async (input: { value?: unknown }) => input,
    },
    fail: {
      description: "Always throws",
      inputSchema: z.object({}),
      execute: async (): Promise<never> => {
        throw new TypeError("tool failed on purpose");
      },
    },
    hostValues: {
      description: "Returns host-realm objects of every kind the codec carries",
      inputSchema: z.object({}),
      execute: async () => ({
        when: new Date(0),
        pattern: /x/g,
        map: new Map([[1, { a: 1 }]]),
        set: new Set([1]),
        error: new RangeError("host-made"),
        bytes: new Uint8Array([1, 2]),
        big: 1n,
        list: [1, [2]],
      }),
    },
    slow: {
      description: "Settles only when aborted",
      inputSchema: z.object({}),
      execute: (_input: unknown, { abortSignal }: { abortSignal?: AbortSignal }) =>
        new Promise<never>((_resolve, reject) => {
          abortSignal?.addEventListener("abort", () => {
            onAbort();
            reject(new Error("aborted"));
          });
        }),
    },
  };
}

/**
 * Sets the secret and the canary for a corpus run. Call before any engine is created (a worker
 * copies `process.env` when it starts).
 */
export function createCorpusHost(): CorpusHost {
  const previous = process.env[SECRET_NAME];
  const secret = `sk-escape-${randomUUID()}`;
  process.env[SECRET_NAME] = secret;
  const canaryDir = mkdtempSync(join(tmpdir(), "suaveplan-escape-canary-"));
  const canaryPath = join(canaryDir, "canary");
  const baseline = snapshotIntrinsics();
  let aborted = 0;
  const tools = corpusTools(() => {
    aborted++;
  });
  return {
    secret,
    canaryPath,
    tools,
    abortedSlowCalls: () => aborted,
    judge(seen) {
      const text = seen
        .map((value) =>
          typeof value === "string" ? value : inspect(value, { depth: Infinity, showHidden: true }),
        )
        .join("\n");
      const now = snapshotIntrinsics();
      const hostPolluted: string[] = [];
      for (const [key, value] of now)
        if (!baseline.has(key) || baseline.get(key) !== value) hostPolluted.push(key);
      for (const key of baseline.keys()) if (!now.has(key)) hostPolluted.push(`${key} (deleted)`);
      return {
        escaped: text.includes(secret) || existsSync(canaryPath) || readdirSync(canaryDir).length > 0,
        hostPolluted,
        reachedProcess: text.includes(REACHED_MARKER),
      };
    },
    dispose() {
      if (previous === undefined) delete process.env[SECRET_NAME];
      else process.env[SECRET_NAME] = previous;
      rmSync(canaryDir, { recursive: true, force: true });
    },
  };
}
