import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  buildChildArgs,
  CPU_LIMIT_FLAG,
  cpuLimitOf,
  cpuLimitSeconds,
  KERNEL_BINDING_FLAG,
  kernelBindingOf,
  NO_WARM_UP_FLAG,
  withCpuLimit,
} from "./node-args.js";

describe("the runner's own arguments", () => {
  it("come after the script, each only when asked for", () => {
    const after = (options: Parameters<typeof buildChildArgs>[2]) =>
      buildChildArgs("/r.js", 32 * 1024 * 1024, options).slice(10);
    expect([
      after({}),
      after({ warmUp: true }),
      after({ cpuSeconds: 5, kernelBinding: "__suaveplan_kernel_00ff00ff00ff00ff", warmUp: false }),
    ]).toEqual([
      [],
      [],
      [`${CPU_LIMIT_FLAG}5`, `${KERNEL_BINDING_FLAG}__suaveplan_kernel_00ff00ff00ff00ff`, NO_WARM_UP_FLAG],
    ]);
    expect(buildChildArgs("/r.js", 32 * 1024 * 1024)[9]).toBe("/r.js");
  });

  it("name the kernel binding back to the runner as given", () => {
    expect(
      [["/r.js", `${KERNEL_BINDING_FLAG}__suaveplan_kernel_0123456789abcdef`], ["/r.js"]].map(
        kernelBindingOf,
      ),
    ).toEqual(["__suaveplan_kernel_0123456789abcdef", undefined]);
  });
});

describe("the child's CPU-time limit", () => {
  it("is four times the timeout plus 3 s, in whole seconds", () => {
    expect([1, 300, 5_000, 30_000, 2_147_483_647].map(cpuLimitSeconds)).toEqual([4, 5, 23, 123, 8_589_938]);
  });

  it("is named to the runner as one argument, and only a positive whole number counts", () => {
    expect(
      [
        ["/r.js", `${CPU_LIMIT_FLAG}23`],
        ["/r.js"],
        ["/r.js", `${CPU_LIMIT_FLAG}0`],
        ["/r.js", `${CPU_LIMIT_FLAG}1.5`],
        ["/r.js", `${CPU_LIMIT_FLAG}x`],
      ].map(cpuLimitOf),
    ).toEqual([23, undefined, undefined, undefined, undefined]);
  });

  it("starts node through prlimit with the limit soft and hard", () => {
    expect(withCpuLimit("/usr/bin/prlimit", 23, "/usr/bin/node", ["--flag", "/r.js"])).toEqual({
      command: "/usr/bin/prlimit",
      args: ["--cpu=23:23", "--", "/usr/bin/node", "--flag", "/r.js"],
    });
  });

  it.skipIf(!existsSync("/usr/bin/prlimit"))(
    "is what the started process runs under, with the environment it was given",
    () => {
      const run = (command: string, args: string[]) => {
        const start = withCpuLimit("/usr/bin/prlimit", 7, command, args);
        return spawnSync(start.command, start.args, { env: { ONLY: "this" }, encoding: "utf8" }).stdout;
      };
      // The shell reports the limits it runs under (it adds PWD to what it passes on; prlimit adds nothing).
      expect(run("/bin/sh", ["-c", "ulimit -St; ulimit -Ht"])).toBe("7\n7\n");
      expect(run("/usr/bin/env", [])).toBe("ONLY=this\n");
    },
  );
});
