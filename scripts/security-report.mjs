#!/usr/bin/env node
// `pnpm security:report`: runs the escape corpus (packages/sandbox-escape-corpus) and prints the
// escape matrix — technique × engine × facade/raw/tools, plus the plugin host — with the declared
// gaps and any failing cell. Exits non-zero when a cell failed or the suite did.
//   --from <dir>   print the matrix a previous run wrote there (no test run)
//   --markdown     print Markdown tables (for SECURITY.md) instead of the terminal layout
//   --abuse-runs N then run the abuse run (scripts/abuse.mjs) with N executions per engine and
//                  print its table (default 200; 0 skips it; `pnpm abuse` runs 1,000)
// Needs the built packages (node scripts/setup.mjs, or pnpm build).
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const root = new URL("..", import.meta.url).pathname;
const corpus = join(root, "packages/sandbox-escape-corpus");
const args = process.argv.slice(2);
const markdown = args.includes("--markdown");
const fromIndex = args.indexOf("--from");
const given = fromIndex === -1 ? undefined : args[fromIndex + 1];
const abuseIndex = args.indexOf("--abuse-runs");
const abuseRuns = abuseIndex === -1 ? 200 : Number(args[abuseIndex + 1]);
if (!Number.isInteger(abuseRuns) || abuseRuns < 0) {
  process.stderr.write(`--abuse-runs must be a whole number, got ${args[abuseIndex + 1]}\n`);
  process.exit(2);
}

let dir = given;
let suiteFailed = false;
if (dir === undefined) {
  dir = mkdtempSync(join(tmpdir(), "suaveplan-escape-matrix-"));
  process.stderr.write("running the escape corpus (about a minute)…\n");
  const run = spawnSync("npx", ["vitest", "run", "--reporter=dot"], {
    cwd: corpus,
    env: { ...process.env, SUAVEPLAN_ESCAPE_MATRIX_DIR: dir },
    stdio: ["ignore", "ignore", "inherit"],
  });
  suiteFailed = run.status !== 0;
}
if (!existsSync(dir)) {
  process.stderr.write(`no matrix in ${dir}\n`);
  process.exit(2);
}

const ENGINES = ["vm", "worker", "spawn", "spawn-confined", "isolate", "quickjs"];
const TARGETS = [...ENGINES, "plugin"];
const cells = [];
for (const target of TARGETS) {
  const file = join(dir, `${target}.json`);
  if (existsSync(file)) cells.push(...JSON.parse(readFileSync(file, "utf8")));
}
if (given === undefined) rmSync(dir, { recursive: true, force: true });
const found = new Set(cells.map((cell) => cell.target));
const missing = TARGETS.filter((target) => !found.has(target));

const COLUMNS = [
  ...ENGINES.flatMap((engine) =>
    ["facade", "raw", "tools"].map((column) => ({ target: engine, column, label: `${engine} ${column}` })),
  ),
  { target: "plugin", column: "plugin", label: "plugin host" },
];
const PASSING = new Set(["blocked", "contained", "expected-failure", "declared", "n/a"]);
const SYMBOL = {
  blocked: "B",
  contained: "C",
  "expected-failure": "F",
  declared: "D",
  "n/a": "·",
};
const symbol = (cell) => (cell === undefined ? "?" : (SYMBOL[cell.verdict] ?? "X"));

const techniques = [...new Set(cells.map((cell) => cell.technique))];
const byKey = new Map(cells.map((cell) => [`${cell.technique}|${cell.target}|${cell.column}`, cell]));
const at = (technique, { target, column }) => byKey.get(`${technique}|${target}|${column}`);
const failing = cells.filter((cell) => !PASSING.has(cell.verdict));
const declared = cells.filter((cell) => cell.verdict === "declared");

const legend =
  "B blocked by the facade's CodeTransformer · C contained (nothing reached the host) · F failed with the expected code (DoS/persistence) · D declared gap (see below) · · needs host tools · X FAILED (escape, host crash, wrong code, leftover state)";

const out = [];
if (markdown) {
  out.push(`| technique | ${COLUMNS.map((c) => c.label).join(" | ")} |`);
  out.push(`| --- | ${COLUMNS.map(() => ":-:").join(" | ")} |`);
  for (const technique of techniques)
    out.push(`| ${technique} | ${COLUMNS.map((c) => symbol(at(technique, c))).join(" | ")} |`);
  out.push("", legend, "");
  out.push("| declared gap | where | outcome | note |", "| --- | --- | --- | --- |");
  const seen = new Set();
  for (const cell of declared) {
    const key = `${cell.technique}|${cell.target}|${cell.detail}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const where = declared
      .filter((other) => `${other.technique}|${other.target}|${other.detail}` === key)
      .map((other) => (other.target === "plugin" ? "plugin host" : `${other.target} ${other.column}`))
      .join(", ");
    out.push(`| ${cell.technique} | ${where} | ${cell.outcome} | ${cell.detail ?? ""} |`);
  }
} else {
  const width = Math.max(...techniques.map((t) => t.length), 9);
  const header = (label) => label.padEnd(width);
  const name = (engine) => (engine === "spawn-confined" ? "confined" : engine);
  out.push(`${header("")}  ${ENGINES.map((e) => name(e).padEnd(9)).join("")}plugin`);
  out.push(`${header("technique")}  ${ENGINES.map(() => "f r t    ").join("")}host`);
  for (const technique of techniques) {
    const groups = ENGINES.map((engine) =>
      ["facade", "raw", "tools"].map((column) => symbol(at(technique, { target: engine, column }))).join(" "),
    );
    out.push(
      `${header(technique)}  ${groups.map((g) => g.padEnd(9)).join("")}${symbol(at(technique, { target: "plugin", column: "plugin" }))}`,
    );
  }
  out.push(
    "",
    "f facade (createSandbox with host tools, CodeTransformer on) · r raw engine class · t raw engine with host tools (hostCalls)",
    legend,
    "",
  );
  out.push("Declared gaps:");
  const notes = new Map();
  for (const cell of declared) {
    const key = `${cell.technique}: ${cell.detail ?? ""}`;
    notes.set(key, [
      ...(notes.get(key) ?? []),
      cell.target === "plugin" ? "plugin" : `${cell.target}/${cell.column}`,
    ]);
  }
  for (const [note, where] of notes) out.push(`  - ${note} [${where.join(", ")}]`);
}

const count = (verdict) => cells.filter((cell) => cell.verdict === verdict).length;
out.push(
  "",
  `${techniques.length} techniques, ${cells.length} cells: ${count("blocked")} blocked, ${count("contained")} contained, ${count("expected-failure")} expected failures, ${count("declared")} declared gaps, ${count("n/a")} n/a, ${failing.length} failing.`,
);
for (const cell of failing)
  out.push(
    `FAILING: ${cell.technique} on ${cell.target} ${cell.column}: ${cell.verdict} (${cell.outcome}) ${cell.detail ?? ""}`,
  );
if (missing.length > 0) out.push(`MISSING: no matrix for ${missing.join(", ")} (did its test file run?)`);
if (suiteFailed) out.push("The corpus suite itself failed: see its output above.");
process.stdout.write(`${out.join("\n")}\n`);

let abuseFailed = false;
if (abuseRuns > 0) {
  process.stderr.write(`running the abuse run (${abuseRuns} executions per engine)…\n`);
  const abuse = spawnSync(process.execPath, [join(root, "scripts/abuse.mjs"), "--runs", String(abuseRuns)], {
    stdio: ["ignore", "pipe", "inherit"],
    encoding: "utf8",
  });
  abuseFailed = abuse.status !== 0;
  process.stdout.write(`\nAbuse run, ${abuseRuns} executions per engine:\n\n${abuse.stdout}`);
}
process.exit(failing.length > 0 || missing.length > 0 || suiteFailed || abuseFailed ? 1 : 0);
