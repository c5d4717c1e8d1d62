#!/usr/bin/env node
// CLI start-up benchmark: `node -e 0` against `suaveplan-sandbox --version` and
// `suaveplan-sandbox exec --mode read-only -- true`, interleaved in one run so
// machine noise hits every row alike. Prints medians (ms) and the ratio to
// `node -e 0`; the target is <= 2x for both CLI rows.
//
//   node bench/startup.bench.mjs [--iterations N] [--json]   (after the package build)
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const bin = join(dirname(fileURLToPath(import.meta.url)), "..", "dist", "bin.js");
const argv = process.argv.slice(2);
const iterations = Number(argv[argv.indexOf("--iterations") + 1]) || 30;
const json = argv.includes("--json");
const workspace = mkdtempSync(join(tmpdir(), "cli-startup-bench-"));
// The probe cache lives in the bench's own directory: the first (warm-up) exec fills it.
const env = { ...process.env, XDG_CACHE_HOME: join(workspace, ".cache") };

const rows = [
  { name: "node -e 0", args: ["-e", "0"] },
  { name: "suaveplan-sandbox --version", args: [bin, "--version"] },
  {
    name: "suaveplan-sandbox exec --mode read-only -- true",
    args: [bin, "exec", "--mode", "read-only", "--", "true"],
  },
  {
    name: "the same exec, probe cache off (SUAVEPLAN_SANDBOX_PROBE_CACHE=off)",
    args: [bin, "exec", "--mode", "read-only", "--", "true"],
    env: { SUAVEPLAN_SANDBOX_PROBE_CACHE: "off" },
  },
];

function once(args, extraEnv = {}) {
  const started = performance.now();
  const run = spawnSync(process.execPath, args, {
    cwd: workspace,
    env: { ...env, ...extraEnv },
    stdio: ["ignore", "ignore", "pipe"],
  });
  const ms = performance.now() - started;
  if (run.status !== 0) throw new Error(`${args.join(" ")} exited ${run.status}: ${run.stderr}`);
  return ms;
}

try {
  for (const row of rows) once(row.args, row.env); // warm the page cache
  const samples = rows.map(() => []);
  for (let i = 0; i < iterations; i++) {
    for (const [r, row] of rows.entries()) samples[r].push(once(row.args, row.env));
  }
  const median = (xs) => {
    const s = [...xs].sort((a, b) => a - b);
    const mid = s.length >> 1;
    return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
  };
  const base = median(samples[0]);
  const results = rows.map((row, r) => {
    const m = median(samples[r]);
    return { name: row.name, medianMs: Number(m.toFixed(1)), ratio: Number((m / base).toFixed(2)) };
  });
  if (json) console.log(JSON.stringify({ iterations, results }, null, 2));
  else {
    console.log(`| command | median (ms) | × node -e 0 |\n| --- | ---: | ---: |`);
    for (const r of results) console.log(`| \`${r.name}\` | ${r.medianMs} | ${r.ratio}× |`);
  }
} finally {
  rmSync(workspace, { recursive: true, force: true });
}
