import { describe, expect, it } from "vitest";
import { resourceLimitsFor } from "./resource-limits.js";

const MIB = 1024 * 1024;

describe("resourceLimitsFor", () => {
  it("splits memoryLimit into young (1/8, 1–16 MiB) and old generation limits that add up to it", () => {
    expect(resourceLimitsFor(128 * MIB)).toEqual({
      maxOldGenerationSizeMb: 112,
      maxYoungGenerationSizeMb: 16,
    });
    expect(resourceLimitsFor(512 * MIB)).toEqual({
      maxOldGenerationSizeMb: 496,
      maxYoungGenerationSizeMb: 16,
    });
    expect(resourceLimitsFor(64 * MIB)).toEqual({ maxOldGenerationSizeMb: 56, maxYoungGenerationSizeMb: 8 });
    expect(resourceLimitsFor(10 * MIB + 1)).toEqual({
      maxOldGenerationSizeMb: 10,
      maxYoungGenerationSizeMb: 1,
    });
    expect(resourceLimitsFor(1)).toEqual({ maxOldGenerationSizeMb: 1, maxYoungGenerationSizeMb: 1 });
  });
});
