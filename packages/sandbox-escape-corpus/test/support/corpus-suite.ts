import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type CorpusCell,
  type CorpusEngine,
  type CorpusHost,
  createCorpusHost,
  createEngineCorpusRun,
  type EngineCorpusRun,
  ESCAPE_TECHNIQUES,
  PASSING_VERDICTS,
  runPluginCell,
  transformerVerdict,
} from "../../src/index.js";

/** Where `pnpm security:report` collects the matrix (one JSON file per target). */
function recordMatrix(target: string, cells: readonly CorpusCell[]): void {
  const dir = process.env.SUAVEPLAN_ESCAPE_MATRIX_DIR;
  if (dir === undefined || dir === "") return;
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${target}.json`), `${JSON.stringify(cells, null, 1)}\n`);
}

/** Cells that failed, as whole values (an empty list is the pass). */
function failing(cells: readonly CorpusCell[]): CorpusCell[] {
  return cells.filter((cell) => !PASSING_VERDICTS.has(cell.verdict));
}

/**
 * Every technique against one engine, through the facade (createSandbox with host tools, the
 * CodeTransformer on), the raw engine class, and the raw engine with host tools. One test per
 * technique, named after it.
 */
export function describeEngineCorpus(engine: CorpusEngine, options: { skip?: boolean } = {}): void {
  describe.skipIf(options.skip === true)(
    `escape corpus on the ${engine} engine: facade, raw engine, raw engine with host tools`,
    () => {
      let host: CorpusHost;
      let run: EngineCorpusRun;
      const cells: CorpusCell[] = [];
      beforeAll(() => {
        host = createCorpusHost();
        run = createEngineCorpusRun(host, engine);
      });
      afterAll(async () => {
        await run?.destroy();
        recordMatrix(engine, cells);
        host?.dispose();
      });

      it.each(ESCAPE_TECHNIQUES.map((technique) => [technique.name, technique] as const))(
        "%s",
        async (_name, technique) => {
          const pendingCall = technique.name === "pending-tool-call-after-run";
          expect.assertions(pendingCall ? 4 : 3);
          const abortedBefore = host.abortedSlowCalls();
          const got = await run.run(technique);
          cells.push(...got);
          expect(got.map((cell) => cell.column)).toEqual(["facade", "raw", "tools"]);
          // No secret, no canary, no reached process, no host pollution, no crash, the expected code.
          expect(failing(got)).toEqual([]);
          // The facade refuses exactly what its CodeTransformer refuses (same verdict, same rule).
          const rule = transformerVerdict(host, technique);
          expect(got.map((cell) => cell.outcome.startsWith("blocked by "))).toEqual([
            rule !== undefined,
            false,
            false,
          ]);
          // A call still pending when the run ended was aborted on the host.
          if (pendingCall) expect(host.abortedSlowCalls()).toBeGreaterThan(abortedBefore);
        },
      );
    },
  );
}

/** Every technique as a plugin of the plugin host (`createVmSandbox`), with the host tools. */
export function describePluginCorpus(): void {
  describe("escape corpus on the plugin host (api-sandbox-vm createVmSandbox)", () => {
    let host: CorpusHost;
    const cells: CorpusCell[] = [];
    beforeAll(() => {
      host = createCorpusHost();
    });
    afterAll(() => {
      recordMatrix("plugin", cells);
      host?.dispose();
    });

    it.each(ESCAPE_TECHNIQUES.map((technique) => [technique.name, technique] as const))(
      "%s",
      async (_name, technique) => {
        expect.assertions(1);
        const cell = await runPluginCell(host, technique);
        cells.push(cell);
        expect(failing([cell])).toEqual([]);
      },
    );
  });
}
