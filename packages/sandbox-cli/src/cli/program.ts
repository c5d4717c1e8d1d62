import { Command, CommanderError, InvalidArgumentError, Option } from "commander";
import { EXEC_EXIT_CODES } from "../exec-command/exec-exit-codes.js";
import type { ExecSettings } from "../exec-command/exec-settings.js";
import type { RunSource } from "../run-command/run-command.js";
import type { CliIo } from "./cli-io.js";
import { EXIT_CODES } from "./exit-codes.js";
import { durationFlag, sizeFlag } from "./unit-flags.js";
import { UsageError } from "./usage-error.js";
import { VERSION } from "./version.js";

// Each subcommand's implementation is imported when it runs, so `exec` and
// `probe` never load the JavaScript engines (or isolated-vm) and start fast.

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

function positiveInt(flag: string) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n <= 0)
      throw new InvalidArgumentError(`${flag} must be a positive whole number`);
    return n;
  };
}

function portNumber(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65_535)
    throw new InvalidArgumentError("must be a port from 0 to 65535");
  return n;
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
    .argument("[file]", "a JavaScript file (.ts or .mts: TypeScript), or - to read standard input")
    .option("-e, --eval <code>", "JavaScript to run instead of a file")
    .option("--ts", "the code is TypeScript (for -e and stdin; implied by a .ts or .mts FILE)", false)
    .option(
      "--typecheck",
      "type-check the TypeScript against the tools' declarations before it runs (needs the typescript package)",
      false,
    )
    .addOption(
      new Option(
        "--engine <name>",
        "isolate | quickjs | spawn | worker | vm, a comma list, or all (isolate, the default, needs isolated-vm)",
      ).default("isolate"),
    )
    .option(
      "--timeout <duration>",
      "wall-clock limit per execution, with its unit: 250ms, 30s, 2m",
      durationFlag(),
    )
    .option(
      "--memory <size>",
      "heap limit per execution, with its unit: 64MiB, 1GiB (not enforced by vm)",
      sizeFlag(),
    )
    .option("--max-output <size>", "cap on captured console output, with its unit: 64KiB, 1MiB", sizeFlag())
    .option("--context <json>", "a JSON object whose keys become globals", jsonObject, {})
    .option("--tools <module>", "an ES module whose default export is the tools object (AI SDK tool() shape)")
    .option("--print-declarations", "print the TypeScript declarations of the tools and exit", false)
    .option("--json", "print the SandboxResult (with calls and usage) as JSON (no streaming)", false)
    .addHelpText(
      "after",
      "\nDurations and sizes carry their unit (ms s m h; B KiB MiB GiB kB MB GB): a bare number is refused.\n" +
        "\nExit codes: 0 success, 1 the code failed, 2 usage error, 3 timeout or memory limit;\n" +
        "130 SIGINT, 141 closed output pipe, 143 SIGTERM (the running code is stopped first).\n" +
        "Security: isolate is a security boundary (hence the default); spawn is one only when the OS also\n" +
        "confines it; worker and vm are NOT: use them for code you trust.\n",
    )
    .action(async (file: string | undefined, opts, command: Command) => {
      const { loadTools, parseEngines, printDeclarations, runCommand } = await import(
        "../run-command/run-command.js"
      );
      const tools = opts.tools === undefined ? undefined : await loadTools(opts.tools as string, io);
      if (opts.printDeclarations === true) {
        exit(printDeclarations(tools, io));
        return;
      }
      const source = runSource(file, opts.eval as string | undefined);
      const typescript = opts.ts === true || (source.kind === "file" && /\.m?ts$/i.test(source.path));
      if (opts.typecheck === true && !typescript)
        throw new UsageError("--typecheck needs TypeScript input: a .ts or .mts FILE, or --ts");
      exit(
        await runCommand(
          source,
          {
            ...(tools === undefined ? {} : { tools }),
            engines: parseEngines(opts.engine as string),
            defaultEngine: command.getOptionValueSource("engine") === "default",
            ...(opts.timeout === undefined ? {} : { timeoutMs: opts.timeout as number }),
            ...(opts.memory === undefined ? {} : { memoryBytes: opts.memory as number }),
            ...(opts.maxOutput === undefined ? {} : { maxOutputBytes: opts.maxOutput as number }),
            context: opts.context as Record<string, unknown>,
            json: Boolean(opts.json),
            language: typescript ? "typescript" : "javascript",
            typecheck: opts.typecheck === true,
          },
          io,
        ),
      );
    });

  program
    .command("exec")
    .description("Run a command confined by the local process sandbox (bwrap / Landlock / Seatbelt / ACL).")
    .addOption(
      new Option("--mode <mode>", "file-effect policy (required here or in --settings)").choices([
        "read-only",
        "workspace-write",
      ]),
    )
    .option("--workspace <dir>", "workspace root (default: current directory)")
    .addOption(
      new Option("--network <policy>", "network policy of the command (default allow)").choices([
        "allow",
        "deny",
      ]),
    )
    .option(
      "--timeout <duration>",
      "kill the confined tree after this long, with its unit: 500ms, 30s, 10m, 1h (default none)",
      durationFlag(),
    )
    .option(
      "--allow-domain <host>",
      "allow only this host (repeatable; api.example.com, *.example.org) through a local filtering HTTP(S) proxy; all other network is cut",
      collect,
      [],
    )
    .option(
      "--allow-write <dir>",
      "an extra writable directory under workspace-write (repeatable)",
      collect,
      [],
    )
    .option(
      "--deny-read <path>",
      "a path or glob the command must not read (repeatable; ~/ is your home)",
      collect,
      [],
    )
    .option(
      "--deny-secrets",
      "also deny reads of SSH keys, cloud credentials, tokens and shell histories in ~",
    )
    .option("--env <NAME[=VALUE]>", "pass NAME from this environment, or set it (repeatable)", collect, [])
    .option("--settings <file>", "a JSON file with the same settings (flags add to or override it)")
    .option("--json", "print the outcome as JSON", false)
    .argument("<command...>", "the command and its arguments, after --")
    .addHelpText(
      "after",
      "\nExit codes: the command's own; 124 timeout; 125 usage error; 126 the sandbox could not run it;\n" +
        "128+N the command died on signal N; 130 SIGINT, 141 closed output pipe, 143 SIGTERM (the confined tree is killed).\n" +
        "HOME, USER, LANG, TERM and PATH pass through; secrets never do unless named with --env.\n" +
        "\nExample: suaveplan-sandbox exec --mode read-only -- sh -c 'echo x > /etc/x'\n",
    )
    .action(async (command: string[], opts) => {
      let settings: ExecSettings = {};
      if (typeof opts.settings === "string") {
        const { readExecSettings } = await import("../exec-command/exec-settings.js");
        settings = readExecSettings(opts.settings, io.cwd);
      }
      const mode = (opts.mode as ExecSettings["mode"]) ?? settings.mode;
      if (mode === undefined)
        throw new UsageError("exec needs --mode read-only|workspace-write (or mode in --settings)");
      const { execCommand } = await import("../exec-command/exec-command.js");
      exit(
        await execCommand(
          command,
          {
            mode,
            workspace: (opts.workspace as string | undefined) ?? settings.workspace,
            network: (opts.network as "allow" | "deny" | undefined) ?? settings.network ?? "allow",
            networkExplicit: opts.network !== undefined || settings.network !== undefined,
            allowDomains: [...(settings.allowDomains ?? []), ...(opts.allowDomain as string[])],
            allowWrite: [...(settings.allowWrite ?? []), ...(opts.allowWrite as string[])],
            denyRead: [...(settings.denyRead ?? []), ...(opts.denyRead as string[])],
            denySecrets: opts.denySecrets === true || settings.denySecrets === true,
            env: [...(settings.env ?? []), ...(opts.env as string[])],
            timeoutMs: (opts.timeout as number | undefined) ?? settings.timeoutMs,
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
    .action(async (opts) => {
      const { probeCommand } = await import("../exec-command/exec-command.js");
      exit(await probeCommand({ json: Boolean(opts.json) }, io));
    });

  program
    .command("mcp")
    .description(
      "Serve run_javascript, run_command and describe_sandbox to an MCP client (Claude, Cursor, …) over stdio.",
    )
    .option(
      "--config <file>",
      "a JSON config: engine, limits, tools module, shell policy, enabled tools (see the sandbox-mcp README)",
    )
    .option(
      "--http <port>",
      "serve Streamable HTTP on 127.0.0.1:PORT (0 picks one) instead of stdio; the bearer token comes from SUAVEPLAN_MCP_TOKEN",
      portNumber,
    )
    .addHelpText(
      "after",
      "\nStandard output carries only MCP messages; diagnostics go to standard error. Ends when the client closes standard input.\n" +
        'Host config: { "command": "npx", "args": ["suaveplan-sandbox", "mcp", "--config", "/path/to/sandbox-mcp.json"] }\n',
    )
    .action(async (opts) => {
      const { mcpCommand } = await import("../mcp-command/mcp-command.js");
      exit(
        await mcpCommand(
          { config: opts.config as string | undefined, http: opts.http as number | undefined },
          io,
        ),
      );
    });

  program
    .command("worker")
    .description(
      "Take sandbox executions from a Redis queue (BullMQ) and run them on this host's engines, for callers of @suaveplan/sandbox-queue.",
    )
    .addOption(
      new Option(
        "--redis <url>",
        "where Redis is: redis://host:6379, rediss://host:6380, unix:///path/redis.sock (the environment keeps a password out of ps)",
      )
        .env("SUAVEPLAN_REDIS_URL")
        .makeOptionMandatory(),
    )
    .option("--queue <name>", "the queue to take jobs from (the callers' queue option)", "sandbox")
    .option("--prefix <name>", "the Redis key prefix (the callers' prefix option)", "sandbox")
    .option(
      "--tools <module>",
      "worker-side tools: an ES module whose default export is the tools object (opt-in, for detached runs; the callers' tools run in the callers)",
    )
    .addOption(
      new Option(
        "--engine <name>",
        "an engine to run jobs on: isolate | quickjs | spawn | worker | vm; repeat it or give a comma list",
      )
        .argParser(collect)
        .default([], "isolate"),
    )
    .option("--concurrency <n>", "jobs run at once", positiveInt("--concurrency"), 4)
    .addOption(
      new Option(
        "--lock-duration <duration>",
        "how long a job's lock lasts without renewal; another worker takes a job whose lock ran out",
      )
        .argParser(durationFlag())
        .default(30_000, "30s"),
    )
    .addOption(
      new Option("--stalled-interval <duration>", "how often to look for jobs whose worker died")
        .argParser(durationFlag())
        .default(30_000, "30s"),
    )
    .addOption(
      new Option(
        "--lease <duration>",
        "this worker's inbox lease: how long it may be unreachable before callers stop reaching it",
      )
        .argParser(durationFlag())
        .default(10_000, "10s"),
    )
    .addOption(
      new Option(
        "--drain <duration>",
        "on SIGTERM/SIGINT: how long running jobs may finish before they go back to the queue",
      )
        .argParser(durationFlag())
        .default(10_000, "10s"),
    )
    .addOption(
      new Option(
        "--transport <name>",
        "how inbox messages travel between callers and workers; the callers' transport option must match",
      )
        .choices(["relay", "queues"])
        .default("relay"),
    )
    .addOption(
      new Option("--start-timeout <duration>", "give up when Redis does not answer at start within this long")
        .argParser(durationFlag())
        .default(10_000, "10s"),
    )
    .addHelpText(
      "after",
      "\nPrints one line on stderr when it takes jobs: suaveplan-sandbox worker: ready — queue …, engines …, concurrency …, inbox ….\n" +
        "SIGTERM or SIGINT: no new jobs; running ones get --drain to finish, then go back to the queue for another\n" +
        "worker; a second signal ends the worker at once (its jobs return to the queue after --lock-duration).\n" +
        "Exit codes: 0 stopped by SIGTERM, 130 by SIGINT, 1 Redis unreachable (after --start-timeout) or refused,\n" +
        "2 usage error (also: an engine this host cannot run, checked at start).\n" +
        "Security: the worker runs untrusted code; give it no application secrets (tools run in the callers).\n" +
        "Redis sees the code, context and results in the clear.\n",
    )
    .action(async (opts) => {
      const [{ parseWorkerEngines }, { workerCommand }, { loadTools }] = await Promise.all([
        import("../worker-command/check-engines.js"),
        import("../worker-command/worker-command.js"),
        import("../run-command/run-command.js"),
      ]);
      exit(
        await workerCommand(
          {
            redis: opts.redis as string,
            queue: opts.queue as string,
            engines: parseWorkerEngines(opts.engine as string[]),
            concurrency: opts.concurrency as number,
            lockDurationMs: opts.lockDuration as number,
            stalledIntervalMs: opts.stalledInterval as number,
            leaseMs: opts.lease as number,
            drainMs: opts.drain as number,
            transport: opts.transport as "relay" | "queues",
            startTimeoutMs: opts.startTimeout as number,
            prefix: opts.prefix as string,
            ...(opts.tools === undefined ? {} : { tools: await loadTools(opts.tools as string, io) }),
          },
          io,
        ),
      );
    });

  program
    .command("bench")
    .description("Benchmark every engine against its raw primitive and print the table (medians and ratios).")
    .option("--iterations <n>", "measured calls per row (default: 200)", positiveInt("--iterations"))
    .option("--json", "print the rows as JSON", false)
    .action(async (opts) => {
      // The benchmarks live in the repository's private @suaveplan/sandbox-bench, bundled into this build.
      const { runBench } = await import("@suaveplan/sandbox-bench");
      const iterations = opts.iterations as number | undefined;
      const { complete } = await runBench(
        { ...(iterations === undefined ? {} : { iterations }), json: Boolean(opts.json) },
        io,
      );
      exit(complete ? EXIT_CODES.ok : EXIT_CODES.failed);
    });

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
    // `exec` reports its own usage errors as 125, so a command's own exit 2 stays distinguishable.
    const usage = argv[0] === "exec" ? EXEC_EXIT_CODES.usage : EXIT_CODES.usage;
    if (error instanceof CommanderError) {
      if (
        error.code === "commander.helpDisplayed" ||
        error.code === "commander.version" ||
        error.exitCode === 0
      ) {
        return EXIT_CODES.ok;
      }
      if (error.code === "commander.help") return EXIT_CODES.ok;
      return usage;
    }
    if (error instanceof UsageError) {
      io.stderr(`error: ${error.message}\n`);
      return usage;
    }
    io.stderr(`error: ${error instanceof Error ? error.message : String(error)}\n`);
    return EXIT_CODES.failed;
  }
}
