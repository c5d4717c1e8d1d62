import {
  chmodSync,
  copyFileSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { landlockLauncherPath } from "../landlock/launcher-path.js";
import { LocalSandboxProvider } from "./local-sandbox-provider.js";
import { createFileProbeCache } from "./probe-cache.js";

const launcherBuilt = (() => {
  try {
    readFileSync(landlockLauncherPath());
    return process.platform === "linux";
  } catch {
    return false;
  }
})();

describe.skipIf(!launcherBuilt)("file probe cache", () => {
  let dir: string;
  let launcher: string;
  let cacheDir: string;
  beforeEach(() => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), "suaveplan-probe-cache-")));
    launcher = join(dir, "landlock-launcher");
    copyFileSync(landlockLauncherPath(), launcher);
    chmodSync(launcher, 0o755);
    cacheDir = join(dir, "cache");
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const provider = () =>
    new LocalSandboxProvider({
      backends: ["landlock"],
      landlockLauncherPath: launcher,
      probeCache: createFileProbeCache(cacheDir),
    });
  /** Mark the cached landlock entry so a later read from the cache is visible. */
  const markCachedEntry = (): void => {
    const file = join(cacheDir, "probes-v1.json");
    const entries = JSON.parse(readFileSync(file, "utf8"));
    entries.landlock.result.facts = { ...entries.landlock.result.facts, fromCache: true };
    writeFileSync(file, JSON.stringify(entries));
  };

  it("a second provider reuses a successful probe instead of probing again", () => {
    const first = provider().probe()[0];
    expect(first?.available).toBe(true);
    markCachedEntry();
    expect(provider().probe()[0]).toEqual({ ...first, facts: { ...first?.facts, fromCache: true } });
  });

  it("a changed runner binary, or a cache file others could write, is not trusted", () => {
    provider().probe();
    markCachedEntry();
    chmodSync(join(cacheDir, "probes-v1.json"), 0o666);
    expect(provider().probe()[0]?.facts?.fromCache).toBeUndefined();
    chmodSync(join(cacheDir, "probes-v1.json"), 0o600);
    markCachedEntry();
    utimesSync(launcher, new Date(), new Date(Date.now() + 5_000));
    expect(provider().probe()[0]?.facts?.fromCache).toBeUndefined();
  });

  it("an unavailable backend is never cached (a fixed host is probed again)", () => {
    const missing = new LocalSandboxProvider({
      backends: ["landlock"],
      landlockLauncherPath: join(dir, "missing"),
      probeCache: createFileProbeCache(cacheDir),
    });
    expect(missing.probe()[0]?.available).toBe(false);
    expect(() => readFileSync(join(cacheDir, "probes-v1.json"))).toThrow(/ENOENT/);
  });
});
