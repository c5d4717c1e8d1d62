import { describe, expect, it } from "vitest";
import { isolatedVmInstallHint, isolatedVmMajorsFor } from "./isolated-vm-versions.js";

describe("isolatedVmMajorsFor", () => {
  it.each([
    [20, [5]],
    [22, [5, 6]],
    [23, [5, 6]],
    [24, [6, 7]],
    [26, [6, 7]],
  ])("Node %i loads isolated-vm %j", (node, majors) => {
    expect(isolatedVmMajorsFor(node)).toEqual(majors);
  });

  it("names the newest major of the line in the install hint", () => {
    expect(isolatedVmInstallHint(24)).toBe(
      "Install the optional peer dependency with `npm i isolated-vm@7` (the newest major for Node 24; it builds a native addon: needs python3, make and a C++ compiler when no prebuilt binary matches); isolates run in this process under `node --no-node-snapshot`, in a helper process otherwise",
    );
    expect(isolatedVmInstallHint(20)).toContain("`npm i isolated-vm@5` (the newest major for Node 20;");
  });
});
