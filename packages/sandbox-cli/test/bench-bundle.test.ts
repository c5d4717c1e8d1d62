// `bench` runs the repository's private @suaveplan/sandbox-bench, which is never published: the
// build bundles it, so the published CLI must not import it, and must itself carry every runtime
// dependency the bench imports (left external by the bundle).
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";

interface Manifest {
  dependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}

const packageDir = join(dirname(fileURLToPath(import.meta.url)), "..");
const read = (file: string) => JSON.parse(readFileSync(file, "utf8")) as Manifest;
const cli = read(join(packageDir, "package.json"));
const bench = read(createRequire(import.meta.url).resolve("@suaveplan/sandbox-bench/package.json"));

it("carries every runtime dependency of the bundled bench, with the same range", () => {
  const runtime = (m: Manifest) => ({ ...m.dependencies, ...m.peerDependencies });
  const carried = runtime(cli);
  expect(Object.fromEntries(Object.keys(runtime(bench)).map((name) => [name, carried[name]]))).toEqual(
    runtime(bench),
  );
  expect(cli.peerDependenciesMeta?.["isolated-vm"]?.optional).toBe(true);
});

it("does not import the private bench package from its build", () => {
  const dist = join(packageDir, "dist");
  const importing = readdirSync(dist)
    .filter((file) => file.endsWith(".js"))
    .filter((file) => /["']@suaveplan\/sandbox-bench["']/.test(readFileSync(join(dist, file), "utf8")));
  expect(importing).toEqual([]);
});
