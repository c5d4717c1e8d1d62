import { createHash } from "node:crypto";
import { accessSync, constants, existsSync, lstatSync, mkdirSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { isAbsolute, join } from "node:path";
import { fileURLToPath } from "node:url";
import { compileLauncher } from "./launcher-compile.js";

/** File name of the compiled launcher inside the package's `dist/`. */
const LAUNCHER_FILE = "landlock-launcher";

/** ELF `e_machine` values → `process.arch`, for the CPUs Node ships on Linux. */
const ELF_MACHINES: Readonly<Record<number, string>> = {
  3: "ia32",
  8: "mips",
  20: "ppc",
  21: "ppc64",
  22: "s390x",
  40: "arm",
  62: "x64",
  183: "arm64",
  243: "riscv64",
  258: "loong64",
};

/** What an ELF executable needs from the host: its CPU and its program interpreter (dynamic loader). */
export interface ElfFacts {
  arch: string;
  interpreter: string | undefined;
}

/** The CPU and loader of the ELF file at `path`, or `undefined` when it is not an ELF executable. */
export function readElfFacts(path: string): ElfFacts | undefined {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch {
    return undefined;
  }
  if (bytes.length < 52 || bytes.readUInt32BE(0) !== 0x7f454c46) return undefined;
  const is64 = bytes[4] === 2;
  const le = bytes[5] === 1;
  const u16 = (at: number) => (le ? bytes.readUInt16LE(at) : bytes.readUInt16BE(at));
  const u32 = (at: number) => (le ? bytes.readUInt32LE(at) : bytes.readUInt32BE(at));
  const word = (at: number) =>
    is64 ? Number(le ? bytes.readBigUInt64LE(at) : bytes.readBigUInt64BE(at)) : u32(at);
  const machine = u16(18);
  const arch = ELF_MACHINES[machine] ?? `elf-machine-${machine}`;
  const phoff = word(is64 ? 32 : 28);
  const phentsize = u16(is64 ? 54 : 42);
  const phnum = u16(is64 ? 56 : 44);
  let interpreter: string | undefined;
  for (let i = 0; i < phnum; i++) {
    const at = phoff + i * phentsize;
    if (at + phentsize > bytes.length) return undefined;
    if (u32(at) !== 3 /* PT_INTERP */) continue;
    const offset = word(at + (is64 ? 8 : 4));
    const size = word(at + (is64 ? 32 : 16));
    interpreter = bytes
      .subarray(offset, offset + size)
      .toString("latin1")
      .replace(/\0+$/, "");
  }
  return { arch, interpreter };
}

/** Where the launcher the package shipped (or the package build produced) lives: `dist/landlock-launcher`. */
export function packagedLauncherPath(): string {
  const candidates = [
    new URL(`./${LAUNCHER_FILE}`, import.meta.url),
    new URL(`../../dist/${LAUNCHER_FILE}`, import.meta.url),
  ].map((url) => fileURLToPath(url));
  const primary = import.meta.url.endsWith(".ts") ? candidates[1] : candidates[0];
  return candidates.find((candidate) => existsSync(candidate)) ?? (primary as string);
}

/** The launcher's C source, shipped in the package's `native/`. */
export function launcherSourcePath(): string {
  const fromDist = fileURLToPath(new URL("../native/landlock-launcher.c", import.meta.url));
  return existsSync(fromDist)
    ? fromDist
    : fileURLToPath(new URL("../../native/landlock-launcher.c", import.meta.url));
}

/** Why the packaged launcher cannot run here, or `undefined` when it can. */
export function packagedLauncherProblem(path: string, arch: string = process.arch): string | undefined {
  if (!existsSync(path)) return "the package has no prebuilt launcher";
  try {
    accessSync(path, constants.X_OK);
  } catch {
    return "the packaged launcher is not executable (it was installed without its mode bit)";
  }
  const elf = readElfFacts(path);
  if (elf === undefined) return "the packaged launcher is not an ELF executable";
  if (elf.arch !== arch) return `the packaged launcher is built for ${elf.arch} and this CPU is ${arch}`;
  if (elf.interpreter !== undefined && !existsSync(elf.interpreter)) {
    return `the packaged launcher needs the loader ${elf.interpreter}, which this system lacks (another C library?)`;
  }
  return undefined;
}

/** A launcher built on first use from the shipped source, because the packaged one cannot run here. */
interface ManagedLauncher {
  /** The launcher's C source. */
  source: string;
  /** Why the packaged launcher was not used. */
  why: string;
  env: NodeJS.ProcessEnv;
}

/** Paths handed out by {@link locateLandlockLauncher} that it will build on first use. */
const managed = new Map<string, ManagedLauncher>();
/** First-use builds already attempted in this process: path → failure text (undefined: built). */
const attempted = new Map<string, string | undefined>();

/** Options of {@link locateLandlockLauncher}; the defaults describe this host and this package. */
export interface LocateLauncherOptions {
  packagedPath?: string;
  sourcePath?: string;
  arch?: string;
  env?: NodeJS.ProcessEnv;
}

/**
 * The launcher this host should use: the packaged `dist/landlock-launcher`
 * when it is executable and built for this CPU and C library; otherwise a
 * launcher built on first use from the shipped `native/landlock-launcher.c`
 * into the user's cache (`$XDG_CACHE_HOME/suaveplan-sandbox/`, else
 * `~/.cache/suaveplan-sandbox/`), named after the CPU and the source's hash.
 * Nothing inside the installed package is written or chmod-ed.
 */
export function locateLandlockLauncher(options: LocateLauncherOptions = {}): string {
  const packagedPath = options.packagedPath ?? packagedLauncherPath();
  const arch = options.arch ?? process.arch;
  const env = options.env ?? process.env;
  const why = packagedLauncherProblem(packagedPath, arch);
  if (why === undefined) return packagedPath;
  const source = options.sourcePath ?? launcherSourcePath();
  let text: Buffer;
  try {
    text = readFileSync(source);
  } catch {
    return packagedPath; // no source shipped: the probe reports the packaged launcher's state
  }
  const hash = createHash("sha256").update(text).digest("hex").slice(0, 16);
  const path = join(cacheDir(env), `${LAUNCHER_FILE}-${process.platform}-${arch}-${hash}`);
  managed.set(path, { source, why, env });
  return path;
}

/** `$XDG_CACHE_HOME/suaveplan-sandbox` (when absolute), else `~/.cache/suaveplan-sandbox`. */
function cacheDir(env: NodeJS.ProcessEnv): string {
  const xdg = env.XDG_CACHE_HOME;
  const base = xdg !== undefined && isAbsolute(xdg) ? xdg : join(env.HOME || homedir(), ".cache");
  return join(base, "suaveplan-sandbox");
}

/**
 * Make sure a launcher returned by {@link locateLandlockLauncher} exists,
 * compiling it on first use. Returns `undefined` when `path` is ready (or is
 * not one this module builds), else why the backend is unavailable.
 */
export function ensureLauncherBuilt(path: string): string | undefined {
  const plan = managed.get(path);
  if (plan === undefined) return undefined;
  if (attempted.has(path)) return attempted.get(path);
  const result = buildManaged(path, plan);
  attempted.set(path, result);
  return result;
}

function buildManaged(path: string, plan: ManagedLauncher): string | undefined {
  const dir = join(path, "..");
  const prefix = `Landlock launcher: ${plan.why}, and building it from source into ${dir} failed`;
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
  } catch (error) {
    return `${prefix}: cannot create the directory (${(error as NodeJS.ErrnoException).code}); set XDG_CACHE_HOME to a writable directory`;
  }
  const stat = lstatSync(dir);
  const uid = process.getuid?.();
  if (!stat.isDirectory() || (uid !== undefined && stat.uid !== uid) || (stat.mode & 0o022) !== 0) {
    return `${prefix}: the directory is not private (it must be a directory owned by this user and writable only by it)`;
  }
  if (existsSync(path))
    return ownedExecutable(path, uid) ? undefined : `${prefix}: ${path} is not a private executable`;
  const result = compileLauncher(plan.source, path, plan.env);
  return result.ok ? undefined : `${prefix}: ${result.error}`;
}

function ownedExecutable(path: string, uid: number | undefined): boolean {
  try {
    const stat = lstatSync(path);
    accessSync(path, constants.X_OK);
    return stat.isFile() && (uid === undefined || stat.uid === uid) && (stat.mode & 0o022) === 0;
  } catch {
    return false;
  }
}
