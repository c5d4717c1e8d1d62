import { describe, expect, it } from "vitest";
import { isNodeSnapshotDisabled, needsNoNodeSnapshot, nodeMajorVersion } from "./node-snapshot.js";

describe("isNodeSnapshotDisabled", () => {
  it("reads --no-node-snapshot from execArgv or NODE_OPTIONS, the last flag winning", () => {
    expect(isNodeSnapshotDisabled(["--no-node-snapshot"], undefined)).toBe(true);
    expect(isNodeSnapshotDisabled(["--no_node_snapshot"], undefined)).toBe(true);
    expect(isNodeSnapshotDisabled([], "--max-old-space-size=512  --no-node-snapshot")).toBe(true);
    expect(isNodeSnapshotDisabled(["--no-node-snapshot"], "--node-snapshot")).toBe(false);
    expect(isNodeSnapshotDisabled([], undefined)).toBe(false);
    expect(isNodeSnapshotDisabled(["--inspect"], "")).toBe(false);
  });

  it("sees the flag vitest passes to this package's test workers", () => {
    expect(isNodeSnapshotDisabled()).toBe(true);
  });
});

describe("needsNoNodeSnapshot", () => {
  it("is true from Node 20 on", () => {
    expect([nodeMajorVersion("20.20.2"), nodeMajorVersion("18.19.0")]).toEqual([20, 18]);
    expect([
      needsNoNodeSnapshot("18.19.0"),
      needsNoNodeSnapshot("20.19.0"),
      needsNoNodeSnapshot("22.1.0"),
    ]).toEqual([false, true, true]);
  });
});
