import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createPrivateTempDirs, type PrivateTempDirs, TEMP_DIR_PREFIX } from "./private-temp-dirs.js";

const SPARE_NAME = new RegExp(`^${TEMP_DIR_PREFIX}[0-9a-f]{32}$`);
const MKDTEMP_NAME = new RegExp(`^${TEMP_DIR_PREFIX}[A-Za-z0-9]{6}$`);

let tempRoot: string;
let dirs: PrivateTempDirs;
beforeEach(() => {
  tempRoot = realpathSync(mkdtempSync(join(tmpdir(), "suaveplan-tempdirs-")));
  dirs = createPrivateTempDirs(tempRoot);
});
afterEach(async () => {
  dirs.dispose();
  await dirs.settled();
  rmSync(tempRoot, { recursive: true, force: true });
});

const entries = (): string[] => readdirSync(tempRoot).sort();

function describeDir(dir: string): {
  parent: string;
  directory: boolean;
  private: boolean;
  entries: string[];
} {
  const st = lstatSync(dir);
  return {
    parent: dirname(dir),
    directory: st.isDirectory(),
    private: (st.mode & 0o077) === 0,
    entries: readdirSync(dir),
  };
}

/** Take a directory once the spare is ready (the background mkdir has run). */
async function takeSpare(): Promise<string> {
  await dirs.settled();
  return dirs.take();
}

describe("createPrivateTempDirs", () => {
  it("each take hands out a distinct, empty, private directory, from the spare once it is ready", async () => {
    const first = dirs.take(); // no spare yet: created synchronously
    const taken = [first];
    for (let i = 0; i < 4; i++) {
      const dir = await takeSpare();
      writeFileSync(join(dir, "left-behind"), "x"); // a used area is never handed out again
      taken.push(dir);
    }
    expect(new Set(taken).size).toBe(5);
    expect(basename(first)).toMatch(MKDTEMP_NAME);
    for (const dir of taken.slice(1)) expect(basename(dir)).toMatch(SPARE_NAME);
    expect(describeDir(first)).toEqual({ parent: tempRoot, directory: true, private: true, entries: [] });
    for (const dir of taken.slice(1)) {
      expect(describeDir(dir)).toEqual({
        parent: tempRoot,
        directory: true,
        private: true,
        entries: ["left-behind"],
      });
    }
  });

  it("falls back to creating one synchronously while the spare is not ready", () => {
    const a = dirs.take();
    const b = dirs.take(); // the spare's mkdir has not even been handed to the thread pool yet
    expect(a).not.toBe(b);
    expect([basename(a), basename(b)].every((name) => MKDTEMP_NAME.test(name))).toBe(true);
    expect(describeDir(b)).toEqual({ parent: tempRoot, directory: true, private: true, entries: [] });
  });

  it("a released directory is removed in the background, files and all; release is idempotent", async () => {
    const dir = await takeSpare();
    mkdirSync(join(dir, "sub"));
    writeFileSync(join(dir, "sub", "f"), "x");
    dirs.release(dir);
    dirs.release(dir);
    await dirs.settled();
    expect(existsSync(dir)).toBe(false);
    expect(entries()).toHaveLength(1); // only the new spare is left
    expect(entries()[0]).toMatch(SPARE_NAME);
  });

  it("dispose() synchronously removes the spare, held areas and areas still being removed; take then throws", async () => {
    const held = dirs.take();
    const released = await takeSpare();
    await dirs.settled(); // a fresh spare is ready again
    expect(entries()).toHaveLength(3);
    writeFileSync(join(held, "f"), "x");
    dirs.release(released); // queued, not yet started
    dirs.dispose();
    expect(entries()).toEqual([]);
    dirs.dispose();
    expect(() => dirs.take()).toThrow(/disposed/);
    await dirs.settled();
    expect(entries()).toEqual([]);
  });

  it("a spare whose mkdir lands after dispose() is removed once it lands", async () => {
    dirs.take();
    await Promise.resolve(); // the spare's mkdir is now on the thread pool
    dirs.dispose();
    await dirs.settled();
    expect(entries()).toEqual([]);
  });

  it("never hands out a spare that was tampered with: not empty, opened up, or replaced", async () => {
    const spareName = async (): Promise<string> => {
      await dirs.settled();
      const name = entries().find((n) => SPARE_NAME.test(n) && !handedOut.has(join(tempRoot, n)));
      if (name === undefined) throw new Error("no spare");
      return join(tempRoot, name);
    };
    const handedOut = new Set<string>([dirs.take()]);

    const planted = await spareName();
    writeFileSync(join(planted, "planted"), "x");
    const a = dirs.take();
    expect(a).not.toBe(planted);
    expect(describeDir(a)).toEqual({ parent: tempRoot, directory: true, private: true, entries: [] });
    handedOut.add(a);

    const opened = await spareName();
    chmodSync(opened, 0o777);
    const b = dirs.take();
    expect(b).not.toBe(opened);
    handedOut.add(b);

    const replaced = await spareName();
    rmSync(replaced, { recursive: true });
    const elsewhere = mkdtempSync(join(tmpdir(), "suaveplan-elsewhere-"));
    try {
      symlinkSync(elsewhere, replaced);
      const c = dirs.take();
      expect(c).not.toBe(replaced);
      expect(realpathSync(c)).not.toBe(realpathSync(elsewhere));
      handedOut.add(c);
      await dirs.settled();
      // tampered directories of ours are removed; the symlink is left alone, and so is its target
      expect([
        existsSync(planted),
        existsSync(opened),
        lstatSync(replaced).isSymbolicLink(),
        existsSync(elsewhere),
      ]).toEqual([false, false, true, true]);
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });
});
