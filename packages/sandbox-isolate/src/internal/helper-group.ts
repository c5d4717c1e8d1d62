import type { ExecutionRequest } from "@suaveplan/sandbox-guest";
import { type HelperRun, type HelperRunHooks, IsolateHelper } from "./isolate-helper.js";

/**
 * Up to `size` helper processes of one engine. Each execution goes to the
 * least loaded one, a helper already running winning a tie, so a lone caller
 * keeps using one warm helper and a second is started only when executions
 * overlap. A helper that dies fails only the executions it held
 * (`SANDBOX_ENGINE_CRASHED`); the others keep running.
 *
 * @internal
 */
export class HelperGroup {
  private readonly helpers: IsolateHelper[];

  constructor(entryPath: string, maxIdleIsolates: number, size: number) {
    this.helpers = Array.from({ length: size }, () => new IsolateHelper(entryPath, maxIdleIsolates));
  }

  /** The running helpers' process ids, in start order of their slots. */
  get pids(): number[] {
    return this.helpers.flatMap((helper) => (helper.pid === undefined ? [] : [helper.pid]));
  }

  /** Send one execution to the least loaded helper (starting it when it does not run). */
  run(request: ExecutionRequest, memoryLimitMiB: number, hooks: HelperRunHooks): HelperRun {
    let best = this.helpers[0] as IsolateHelper;
    let bestScore = Number.POSITIVE_INFINITY;
    for (const helper of this.helpers) {
      // Two points per execution held, one for having to start: a started idle helper wins.
      const score = helper.load * 2 + (helper.pid === undefined ? 1 : 0);
      if (score < bestScore) {
        best = helper;
        bestScore = score;
      }
    }
    return best.run(request, memoryLimitMiB, hooks);
  }

  /** Drop every helper's warm isolates. */
  reset(): void {
    for (const helper of this.helpers) helper.reset();
  }

  /** Kill every helper and wait until they are gone. */
  async close(): Promise<void> {
    await Promise.all(this.helpers.map((helper) => helper.close()));
  }
}
