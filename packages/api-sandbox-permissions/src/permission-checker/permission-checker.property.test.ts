import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PermissionChecker } from "./permission-checker.js";

// Property tests on a real tree with symlinks that leave, stay inside, and dangle:
//   root/allowed/{a.txt, sub/b.txt}   root/allowed/inner -> allowed/sub   root/allowed/escape -> outside
//   root/allowed/secret-link -> secret   root/allowed/dangling -> outside/new.txt (missing)
//   root/outside/key.txt   root/secret
// The policy grants read and write on allowed/** only.

let root: string;
let allowedRoot: string;
let checker: PermissionChecker;
beforeAll(() => {
  root = realpathSync(mkdtempSync(join(tmpdir(), "perm-property-")));
  allowedRoot = join(root, "allowed");
  mkdirSync(join(root, "allowed/sub"), { recursive: true });
  mkdirSync(join(root, "outside"));
  writeFileSync(join(root, "allowed/a.txt"), "a");
  writeFileSync(join(root, "allowed/sub/b.txt"), "b");
  writeFileSync(join(root, "outside/key.txt"), "k");
  writeFileSync(join(root, "secret"), "s");
  symlinkSync(join(root, "allowed/sub"), join(root, "allowed/inner"));
  symlinkSync(join(root, "outside"), join(root, "allowed/escape"));
  symlinkSync(join(root, "secret"), join(root, "allowed/secret-link"));
  symlinkSync(join(root, "outside/new.txt"), join(root, "allowed/dangling"));
  checker = new PermissionChecker(
    {
      fs: [
        { path: "allowed/**", access: "read" },
        { path: "allowed/**", access: "write" },
      ],
    },
    { cwd: root },
  );
});
afterAll(() => {
  rmSync(root, { recursive: true, force: true });
});

/** Detours that lead back to the root, the way open(2) walks them (`..` after a symlink is `..` of its target). */
const detour = fc.constantFrom(
  "",
  "./",
  ".//",
  "allowed/../",
  "allowed/sub/../../",
  "allowed/inner/../../",
  "allowed/escape/../",
  "outside/../",
  "missing/../",
  "allowed/./sub/./../../",
);
const detours = fc.array(detour, { maxLength: 4 }).map((parts) => parts.join(""));
const absolute = fc.boolean();
const access = fc.constantFrom("read" as const, "write" as const);
const spell = (isAbsolute: boolean, prefix: string, target: string) =>
  `${isAbsolute ? `${root}/` : ""}${prefix}${target}`;

/** Every way to the secret file, to outside/, and to a file a dangling link would create outside. */
const deniedTarget = fc.constantFrom(
  "secret",
  "allowed/secret-link",
  "allowed/../secret",
  "allowed/sub/../../secret",
  "allowed/inner/../../secret",
  "allowed/inner/../../outside/key.txt",
  "allowed/escape/key.txt",
  "allowed/escape/../secret",
  "outside/key.txt",
  "allowed/dangling",
  "allowed/escape/new.txt",
  "allowed/escape",
);
const allowedTarget = fc.constantFrom(
  "allowed/a.txt",
  "allowed/sub/b.txt",
  "allowed/inner/b.txt",
  "allowed/sub/../a.txt",
  "allowed/new.txt",
);

describe("PermissionChecker (properties)", () => {
  it("a denied path stays denied under any spelling: .., ./, //, symlinks out, dangling links, absolute or relative", async () => {
    await fc.assert(
      fc.asyncProperty(absolute, detours, deniedTarget, access, async (isAbsolute, prefix, target, how) => {
        const decision = await checker.checkFs(spell(isAbsolute, prefix, target), how);
        expect(decision.allowed).toBe(false);
      }),
      { numRuns: 300 },
    );
  });

  it("the same detours in front of an allowed path keep it allowed, canonicalised inside the allowed root", async () => {
    await fc.assert(
      fc.asyncProperty(absolute, detours, allowedTarget, access, async (isAbsolute, prefix, target, how) => {
        const decision = await checker.checkFs(spell(isAbsolute, prefix, target), how);
        expect(decision.allowed).toBe(true);
        expect(decision.canonicalPath?.startsWith(`${allowedRoot}/`)).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it("random component soup: for an existing path, allowed exactly when the kernel resolves it inside the allowed root", async () => {
    const component = fc.constantFrom(
      "allowed",
      "sub",
      "inner",
      "escape",
      "secret-link",
      "dangling",
      "outside",
      "key.txt",
      "a.txt",
      "b.txt",
      "secret",
      "..",
      ".",
      "",
      "missing",
    );
    await fc.assert(
      fc.asyncProperty(fc.array(component, { minLength: 1, maxLength: 6 }), async (parts) => {
        const spelled = parts.join("/");
        const decision = await checker.checkFs(spelled, "read");
        // A leading empty component makes the spelling absolute (from /), as the checker reads it.
        const onDisk = spelled.startsWith("/") ? spelled : `${root}/${spelled}`;
        let real: string | undefined;
        try {
          real = existsSync(onDisk) ? realpathSync.native(onDisk) : undefined;
        } catch {
          real = undefined; // e.g. a component that is a file followed by more components
        }
        if (real !== undefined) {
          expect({ spelled, allowed: decision.allowed }).toEqual({
            spelled,
            allowed: real === allowedRoot || real.startsWith(`${allowedRoot}/`),
          });
        }
        if (decision.allowed) expect(decision.canonicalPath?.startsWith(allowedRoot)).toBe(true);
      }),
      { numRuns: 400 },
    );
  });
});
