import { Command, CommanderError, InvalidArgumentError, Option } from "commander";
import { benchCommand } from "../bench/bench-command.js";
import { execCommand, probeCommand } from "../exec-command/index.js";
import { parseEngines, type RunSource, runCommand } from "../run-command/run-command.js";
import type { CliIo } from "./cli-io.js";
import { EXIT_CODES } from "./exit-codes.js";
import { UsageError } from "./usage-error.js";

const VERSION = "0.1.0";

function positiveInt(flag: string) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n <= 0)
      throw new InvalidArgumentError(`${flag} must be a positive whole number`);
    return n;
  };
}

function jsonObject(value: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch (error) {
    throw new InvalidArgumentError(`must be JSON (${(error as Error).message})`);
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
    throw new InvalidArgumentError("must be a JSON object, e.g. '{\"n\": 3}'");
  }
  return parsed as Record<string, unknown>;
}

/** Build the `suaveplan-sandbox` command tree; `exit` receives the command's exit code (see {@link EXIT_CODES}; `exec` passes the command's own). */
export function createProgram(io: CliIo, exit: (code: number) => void): Command {
  const program = new Command("suaveplan-sandbox")
    .description("Run untrusted JavaScript under the engine you choose, and confine shell commands.")
    .version(VERSION)
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
    .showHelpAfterError("(run with --help for usage)")
    .exitOverride();

  program
    .command("run")
    .description(
      "Execute JavaScript from FILE, -e CODE, or - (stdin) in a sandbox and print its logs and result.",
    )
    .argument("[file]", "a JavaScript file, or - to read standard input")
    .option("-e, --eval <code>", "JavaScript to run instead of a file")
    .addOption(
      new Option("--engine <name>", "vm | worker | spawn | isolate, a comma list, or all").default("vm"),
    )
    .option("--timeout <ms>", "wall-clock limit per execution in ms", positiveInt("--timeout"))
    .option("--memory <MiB>", "heap limit per execution in MiB (not enforced by vm)", positiveInt("--memory"))
    .option("--max-output <bytes>", "cap on captured console output in bytes", positiveInt("--max-output"))
    .option("--context <json>", "a JSON object whose keys become globals", jsonObject, {})
    .option("--json", "print the SandboxResult as JSON (no streaming)", false)
    .addHelpText(
      "after",
      "\nExit codes: 0 success, 1 the code failed, 2 usage error, 3 timeout or memory limit.\n" +
        "Security: vm and worker are NOT security boundaries; isolate is; spawn is one only when confined.\n",
    )
    .action(async (file: string | undefined, opts) => {
      const source = runSource(file, opts.eval as string | undefined);
      exit(
        await runCommand(
          source,
          {
            engines: parseEngines(opts.engine as string),
            ...(opts.timeout === undefined ? {} : { timeoutMs: opts.timeout as number }),
            ...(opts.memory === undefined ? {} : { memoryBytes: (opts.memory as number) * 1024 * 1024 }),
            ...(opts.maxOutput === undefined ? {} : { maxOutputBytes: opts.maxOutput as number }),
            context: opts.context as Record<string, unknown>,
            json: Boolean(opts.json),
          },
          io,
        ),
      );
    });

  program
    .command("exec")
    .description("Run a command confined by the local process sandbox (bwrap / Landlock / Seatbelt / ACL).")
    .addOption(
      new Option("--mode <mode>", "file-effect policy")
        .choices(["read-only", "workspace-write"])
        .makeOptionMandatory(),
    )
    .option("--workspace <dir>", "workspace root (default: current directory)")
    .addOption(
      new Option("--network <policy>", "network policy of the command")
        .choices(["allow", "deny"])
        .default("allow"),
    )
    .option("--json", "print the outcome as JSON", false)
    .argument("<command...>", "the command and its arguments, after --")
    .addHelpText("after", "\nExample: suaveplan-sandbox exec --mode read-only -- sh -c 'echo x > /etc/x'\n")
    .action(async (command: string[], opts) => {
      exit(
        await execCommand(
          command,
          {
            mode: opts.mode,
            workspace: opts.workspace as string | undefined,
            network: opts.network === "deny" ? "deny" : "allow",
            json: Boolean(opts.json),
          },
          io,
        ),
      );
    });

  program
    .command("probe")
    .description("Report which local confinement backends work on this host, their enforcement, and why not.")
    .option("--json", "print the probe as JSON", false)
    .action(async (opts) => exit(await probeCommand({ json: Boolean(opts.json) }, io)));

  program
    .command("bench")
    .description("Benchmark every engine against its raw primitive and print the table (medians and ratios).")
    .option("--iterations <n>", "measured calls per row", positiveInt("--iterations"), 200)
    .option("--json", "print the rows as JSON", false)
    .action(async (opts) =>
      exit(await benchCommand({ iterations: opts.iterations as number, json: Boolean(opts.json) }, io)),
    );

  return program;
}

function runSource(file: string | undefined, code: string | undefined): RunSource {
  if (code !== undefined && file !== undefined) throw new UsageError("give either FILE or -e CODE, not both");
  if (code !== undefined) return { kind: "inline", code };
  if (file === undefined) throw new UsageError("missing code: give FILE, -e CODE, or - for standard input");
  if (file === "-") return { kind: "stdin" };
  return { kind: "file", path: file };
}

/** Parse `argv` (without node and script) and run; resolves the exit code. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  let code: number = EXIT_CODES.ok;
  const program = createProgram(io, (c) => {
    code = c;
  });
  try {
    await program.parseAsync([...argv], { from: "user" });
    return code;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (
        error.code === "commander.helpDisplayed" ||
        error.code === "commander.version" ||
        error.exitCode === 0
      ) {
        return EXIT_CODES.ok;
      }
      if (error.code === "commander.help") return EXIT_CODES.ok;
      return EXIT_CODES.usage;
    }
    if (error instanceof UsageError) {
      io.stderr(`error: ${error.message}\n`);
      return EXIT_CODES.usage;
    }
    io.stderr(`error: ${error instanceof Error ? error.message : String(error)}\n`);
    return EXIT_CODES.failed;
  }
}
