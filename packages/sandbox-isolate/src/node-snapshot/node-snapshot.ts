/**
 * True when this Node process runs without the Node startup snapshot, which
 * isolated-vm requires on Node 20 and later (`node --no-node-snapshot`).
 *
 * Node does not expose the setting at runtime, so this reads the flags the
 * process was started with: `process.execArgv` (worker threads inherit it)
 * and `NODE_OPTIONS`, which accepts the flag on Node 20 although it does not
 * show it in `execArgv`.
 *
 * @param execArgv - the process flags; defaults to `process.execArgv`
 * @param nodeOptions - the `NODE_OPTIONS` value; defaults to `process.env.NODE_OPTIONS`
 */
export function isNodeSnapshotDisabled(
  execArgv: readonly string[] = process.execArgv,
  nodeOptions: string | undefined = process.env.NODE_OPTIONS,
): boolean {
  const flags = [...execArgv, ...(nodeOptions ?? "").split(/\s+/)];
  let disabled = false;
  for (const flag of flags) {
    const name = flag.replaceAll("_", "-");
    // Later flags win, as in Node's own option parser.
    if (name === "--no-node-snapshot") disabled = true;
    else if (name === "--node-snapshot") disabled = false;
  }
  return disabled;
}

/** Node's major version, e.g. 20. */
export function nodeMajorVersion(version: string = process.versions.node): number {
  return Number.parseInt(version.split(".")[0] ?? "0", 10);
}

/** True when this Node version needs `--no-node-snapshot` for isolated-vm (Node 20 and later). */
export function needsNoNodeSnapshot(version: string = process.versions.node): boolean {
  return nodeMajorVersion(version) >= 20;
}
