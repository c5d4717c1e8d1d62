import { expect, it } from "vitest";
import { createProgress } from "./progress.js";

it("prints each finished row with the time spent and the time left at the mean row so far", () => {
  const lines: string[] = [];
  const clock = [0, 4_000, 10_000, 12_200];
  const step = createProgress(
    3,
    (line) => lines.push(line),
    () => clock.shift() ?? 0,
  );
  step("vm W1");
  step("isolate W1 (skipped: isolated-vm is not installed)");
  step("worker reuse");
  expect(lines).toEqual([
    "  [1/3] vm W1 — 4 s elapsed, about 8 s left\n",
    "  [2/3] isolate W1 (skipped: isolated-vm is not installed) — 10 s elapsed, about 5 s left\n",
    "  [3/3] worker reuse — 12 s elapsed\n",
  ]);
});
