import { describe, expect, it } from "vitest";
import { isSandboxError } from "../error-codes/index.js";
import {
  formatSize,
  parseDuration,
  parseSandboxConfig,
  parseSandboxOptions,
  parseSize,
  readDuration,
  readSize,
} from "./index.js";

const PAGE = (code: string) => `(${code}); see @suaveplan/sandbox-core/docs/errors/${code}.md`;

function thrown(run: () => unknown): { code: string; message: string } {
  try {
    run();
  } catch (error) {
    if (isSandboxError(error)) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error("expected a SandboxError");
}

describe("readDuration", () => {
  it("reads numbers as ms and strings by their unit", () => {
    const inputs: unknown[] = [30, "250ms", "30s", "1.5s", "0.5s", "2m", "1h", "30 s", " 2m ", "1.001s"];
    expect(inputs.map((input) => readDuration(input))).toEqual(
      [30, 250, 30_000, 1500, 500, 120_000, 3_600_000, 30_000, 120_000, 1001].map((value) => ({
        ok: true,
        value,
      })),
    );
  });

  it("refuses bare numeric strings, unknown units, negatives, NaN, Infinity and fractions of a ms", () => {
    const inputs: unknown[] = [
      "30",
      "30sec",
      "-1s",
      "NaN",
      "Infinity",
      "1e3s",
      "0.5ms",
      "",
      Number.NaN,
      -5,
      1.5,
      true,
    ];
    expect(inputs.map((input) => readDuration(input))).toEqual([
      {
        ok: false,
        reason:
          'needs a unit (ms, s, m, h): a string must say which, e.g. "30ms"; a plain number is read as milliseconds',
      },
      { ok: false, reason: 'has an unknown unit "sec" (did you mean s?); units are ms, s, m, h' },
      {
        ok: false,
        reason: 'must not be negative; write a number and a unit (ms, s, m, h), e.g. "250ms", "30s", "2m"',
      },
      {
        ok: false,
        reason: 'is not a duration; write a number and a unit (ms, s, m, h), e.g. "250ms", "30s", "2m"',
      },
      {
        ok: false,
        reason: 'is not a duration; write a number and a unit (ms, s, m, h), e.g. "250ms", "30s", "2m"',
      },
      {
        ok: false,
        reason: 'is not a duration; write a number and a unit (ms, s, m, h), e.g. "250ms", "30s", "2m"',
      },
      { ok: false, reason: "is not a whole number of milliseconds (0.5 ms = 0.5 milliseconds)" },
      {
        ok: false,
        reason: 'is not a duration; write a number and a unit (ms, s, m, h), e.g. "250ms", "30s", "2m"',
      },
      { ok: false, reason: "must be a finite number of milliseconds" },
      { ok: false, reason: "must not be negative" },
      { ok: false, reason: "must be a whole number of milliseconds" },
      {
        ok: false,
        reason: 'must be a number of milliseconds or a duration string such as "250ms", "30s", "2m"',
      },
    ]);
  });
});

describe("readSize", () => {
  it("reads IEC units as powers of 1024 and SI units as powers of 1000", () => {
    const inputs: unknown[] = [
      4096,
      "100B",
      "512KiB",
      "64MiB",
      "1GiB",
      "1.5KiB",
      "500kB",
      "64MB",
      "1GB",
      "64 MiB",
    ];
    expect(inputs.map((input) => readSize(input))).toEqual(
      [
        4096, 100, 524_288, 67_108_864, 1_073_741_824, 1536, 500_000, 64_000_000, 1_000_000_000, 67_108_864,
      ].map((value) => ({ ok: true, value })),
    );
  });

  it("refuses ambiguous spellings, bare strings, negatives and fractional bytes", () => {
    const inputs: unknown[] = [
      "64",
      "64KB",
      "64mb",
      "64M",
      "64mib",
      "-1MiB",
      "1.3KiB",
      "0.5B",
      Number.POSITIVE_INFINITY,
    ];
    expect(inputs.map((input) => readSize(input))).toEqual([
      {
        ok: false,
        reason:
          'needs a unit (B, KiB, MiB, GiB, kB, MB, GB): a string must say which, e.g. "64MiB"; a plain number is read as bytes',
      },
      {
        ok: false,
        reason:
          'has an unknown unit "KB" (did you mean KiB (1024 bytes) or kB (1000 bytes)?); units are B, KiB, MiB, GiB, kB, MB, GB',
      },
      {
        ok: false,
        reason:
          'has an unknown unit "mb" (did you mean MiB (1048576 bytes) or MB (1000000 bytes)?); units are B, KiB, MiB, GiB, kB, MB, GB',
      },
      {
        ok: false,
        reason: 'has an unknown unit "M" (did you mean MiB or MB?); units are B, KiB, MiB, GiB, kB, MB, GB',
      },
      {
        ok: false,
        reason: 'has an unknown unit "mib" (did you mean MiB?); units are B, KiB, MiB, GiB, kB, MB, GB',
      },
      {
        ok: false,
        reason:
          'must not be negative; write a number and a unit (B, KiB, MiB, GiB, kB, MB, GB), e.g. "512KiB", "64MiB", "1GiB"',
      },
      { ok: false, reason: "is not a whole number of bytes (1.3 KiB = 1331.2 bytes)" },
      { ok: false, reason: "is not a whole number of bytes (0.5 B = 0.5 bytes)" },
      { ok: false, reason: "must be a finite number of bytes" },
    ]);
  });

  it("formatSize names whole binary units, else bytes", () => {
    expect([8 * 1024 * 1024, 1024 ** 3, 1536, 1000].map(formatSize)).toEqual([
      "8 MiB",
      "1 GiB",
      "1536 bytes",
      "1000 bytes",
    ]);
  });
});

describe("parseDuration and parseSize", () => {
  it("return the value, or throw a coded error naming the field and the value", () => {
    expect([parseDuration("1.5s", "timeout"), parseSize("64MiB", "memoryLimit")]).toEqual([1500, 67_108_864]);
    expect(thrown(() => parseSize("64mb", "--memory"))).toEqual({
      code: "SANDBOX_INVALID_CONFIG",
      message: `--memory: "64mb" has an unknown unit "mb" (did you mean MiB (1048576 bytes) or MB (1000000 bytes)?); units are B, KiB, MiB, GiB, kB, MB, GB ${PAGE("SANDBOX_INVALID_CONFIG")}`,
    });
    expect(thrown(() => parseDuration(-1, "options.timeout", "SANDBOX_INVALID_OPTIONS"))).toEqual({
      code: "SANDBOX_INVALID_OPTIONS",
      message: `options.timeout: -1 must not be negative ${PAGE("SANDBOX_INVALID_OPTIONS")}`,
    });
  });
});

describe("the config and option schemas take unit strings", () => {
  it("createSandbox config: every duration and size field", () => {
    const config = parseSandboxConfig({
      timeout: "1.5s",
      memoryLimit: "64MiB",
      maxOutputSize: "512KiB",
      rateLimitWindow: "2m",
      pool: { idleTimeoutMs: "30s", acquireTimeoutMs: "250ms" },
    });
    expect({
      timeout: config.timeout,
      memoryLimit: config.memoryLimit,
      maxOutputSize: config.maxOutputSize,
      rateLimitWindow: config.rateLimitWindow,
      idleTimeoutMs: config.pool?.idleTimeoutMs,
      acquireTimeoutMs: config.pool?.acquireTimeoutMs,
    }).toEqual({
      timeout: 1500,
      memoryLimit: 67_108_864,
      maxOutputSize: 524_288,
      rateLimitWindow: 120_000,
      idleTimeoutMs: 30_000,
      acquireTimeoutMs: 250,
    });
  });

  it("per-execution options", () => {
    expect(parseSandboxOptions({ timeout: "250ms", memoryLimit: "1GiB", maxOutputSize: "1MB" })).toEqual({
      timeout: 250,
      memoryLimit: 1_073_741_824,
      maxOutputSize: 1_000_000,
    });
  });

  it("bad strings and out-of-range values name the field, the value and the fix", () => {
    const cases: Array<[() => unknown, string]> = [
      [
        () => parseSandboxConfig({ memoryLimit: "64 megabytes" }),
        `Invalid sandbox config: config.memoryLimit: has an unknown unit "megabytes" (did you mean MB or MiB?); units are B, KiB, MiB, GiB, kB, MB, GB (got "64 megabytes") ${PAGE("SANDBOX_INVALID_CONFIG")}`,
      ],
      [
        () => parseSandboxConfig({ timeout: "0s" }),
        `Invalid sandbox config: config.timeout: Too small: expected number to be >0 (got "0s") ${PAGE("SANDBOX_INVALID_CONFIG")}`,
      ],
      [
        () => parseSandboxConfig({ timeout: "1000h" }),
        `Invalid sandbox config: config.timeout: Too big: expected number to be <=2147483647 (got "1000h") ${PAGE("SANDBOX_INVALID_CONFIG")}`,
      ],
      [
        () => parseSandboxOptions({ maxOutputSize: "1.3KiB" }),
        `Invalid execution options: options.maxOutputSize: is not a whole number of bytes (1.3 KiB = 1331.2 bytes) (got "1.3KiB") ${PAGE("SANDBOX_INVALID_OPTIONS")}`,
      ],
      [
        () => parseSandboxOptions({ timeout: 2.5 }),
        `Invalid execution options: options.timeout: Invalid input: expected int, received number (got 2.5) ${PAGE("SANDBOX_INVALID_OPTIONS")}`,
      ],
    ];
    expect(cases.map(([run]) => thrown(run).message)).toEqual(cases.map(([, message]) => message));
  });
});
