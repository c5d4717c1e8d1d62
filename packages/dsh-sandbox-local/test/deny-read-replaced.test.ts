// denyRead of files (and directories) while the host replaces them by rename
// (as editors, credential refreshers and atomic writers do): real bwrap and Landlock inside
// bwrap, a real confined command that reads the file after the replacement.
import { spawn } from "node:child_process";
import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { LocalBackendName } from "../src/backend/index.js";
import { LocalSandboxProvider } from "../src/index.js";

const BACKENDS: readonly LocalBackendName[] = ["bwrap", "landlock+bwrap"];
const usable = BACKENDS.filter(
  (name) => new LocalSandboxProvider({ backends: [name] }).probe()[0]?.available === true,
);

let dir: string;
let home: string;
let workspace: string;
beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), "suaveplan-deny-read-rename-")));
  // The usual shape: the secrets and the workspace share the home directory.
  home = join(dir, "home");
  workspace = join(home, "ws");
  mkdirSync(join(home, ".docker"), { recursive: true });
  // A denied directory alone in its parent (no denied file beside it).
  mkdirSync(join(dir, "ssh"));
  writeFileSync(join(dir, "ssh", "id"), "old key\n");
  mkdirSync(workspace);
  writeFileSync(join(home, ".netrc"), "old netrc\n");
  writeFileSync(join(home, ".gitconfig"), "sibling\n");
  writeFileSync(join(home, ".docker", "config.json"), "old docker\n");
  writeFileSync(join(home, ".docker", "other.json"), "docker sibling\n");
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** Replace `path` the way an atomic writer does: a new file renamed over it. */
function replaceByRename(path: string, text: string): void {
  writeFileSync(`${path}.tmp`, text);
  renameSync(`${path}.tmp`, path);
}

describe.each(usable)("%s: denyRead", (name) => {
  it("holds when the host replaces a denied file by rename, or a denied directory by a new one, while the command runs; siblings and the workspace stay usable", async () => {
    const provider = new LocalSandboxProvider({ backends: [name] });
    const netrc = join(home, ".netrc");
    const docker = join(home, ".docker", "config.json");
    const ssh = join(dir, "ssh");
    // The command waits for the host's replacement (signalled by the file `go`), then reads.
    const script = [
      "echo ready",
      "while [ ! -e go ]; do sleep 0.02; done",
      `for f in ${netrc} ${docker} ${ssh}/id ${join(home, ".gitconfig")} ${join(home, ".docker", "other.json")}; do cat "$f" 2>/dev/null || echo "hidden $f"; done`,
      "echo written > out",
    ].join("; ");
    const confined = provider.confine(["/bin/sh", "-c", script], {
      mode: "workspace-write",
      workspaceRoot: workspace,
      denyRead: [netrc, docker, ssh],
    });
    try {
      const [file, ...args] = confined.argv;
      const child = spawn(file as string, args, {
        cwd: workspace,
        env: { PATH: "/usr/bin:/bin", ...confined.env },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stdout = "";
      const exited = new Promise<number | null>((resolve) => child.once("close", resolve));
      const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
      await new Promise<void>((resolve) => {
        child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
          stdout += chunk;
          if (stdout.startsWith("ready\n")) resolve();
        });
        child.once("close", () => resolve());
      });
      replaceByRename(netrc, "new netrc\n");
      replaceByRename(docker, "new docker\n");
      // A directory replaced wholesale: the old one moved aside, a new one made.
      renameSync(ssh, `${ssh}.old`);
      mkdirSync(ssh);
      writeFileSync(join(ssh, "id"), "new key\n");
      writeFileSync(join(workspace, "go"), "");
      const exitCode = await exited;
      clearTimeout(timer);
      expect({ exitCode, stdout, out: readFileSync(join(workspace, "out"), "utf8") }).toEqual({
        exitCode: 0,
        stdout: `ready\nhidden ${netrc}\nhidden ${docker}\nhidden ${ssh}/id\nsibling\ndocker sibling\n`,
        out: "written\n",
      });
    } finally {
      confined.dispose?.();
      provider.dispose();
    }
  });

  it("is refused, coded, for a file in a writable root, naming the directory to deny instead", () => {
    const provider = new LocalSandboxProvider({ backends: [name] });
    mkdirSync(join(workspace, "config"));
    writeFileSync(join(workspace, "config", ".env"), "TOKEN=1\n");
    try {
      const refuse = (path: string): unknown => {
        try {
          provider.confine(["true"], { mode: "workspace-write", workspaceRoot: workspace, denyRead: [path] });
          return "confined";
        } catch (error) {
          const { code, message } = error as { code: string; message: string };
          return {
            code,
            instead: /Deny (its directory "[^"]*"|a directory that holds it) instead/.exec(message)?.[0],
          };
        }
      };
      expect([refuse(join(workspace, "config", ".env")), refuse(join(workspace, "config"))]).toEqual([
        {
          code: "SANDBOX_UNAVAILABLE",
          instead: `Deny its directory ${JSON.stringify(join(workspace, "config"))} instead`,
        },
        "confined",
      ]);
    } finally {
      provider.dispose();
    }
  });
});
