import { expect, it } from "vitest";
import { createVmSandbox } from "../sandbox/create-vm-sandbox.js";
import { runVmSandboxConformance } from "./run-vm-conformance.js";

// The in-package fixture: the real createVmSandbox (worker thread + frozen vm context).
const report = runVmSandboxConformance("self", (options) => createVmSandbox(options));

it("in-package fixture passes runVmSandboxConformance", () => {
  expect({ failed: report.failed, passed: [...report.passed].sort() }).toEqual({
    failed: [],
    passed: [...report.scenarios].sort(),
  });
});
