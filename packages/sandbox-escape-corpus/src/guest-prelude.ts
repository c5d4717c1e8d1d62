/** What the prelude needs to know about the host it attacks. */
export interface PreludeSettings {
  /** Name of the environment variable holding the host's secret. */
  readonly secretName: string;
  /** Absolute path a successful escape writes (the host watches it). */
  readonly canaryPath: string;
}

/**
 * Guest code put before every technique (plain guest JavaScript, test data like the snippets).
 *
 * - `pwn(p)`: if `p` looks like a Node `process`, read the secret from its env and try every
 *   write we know of to the canary — `getBuiltinModule("fs")`, `mainModule.require("fs")`, and
 *   the permission-model bypasses of Node's advisories (a `Buffer`/`Uint8Array` path,
 *   CVE-2023-32004 / CVE-2023-39332; `process.binding("fs")`, CVE-2023-32558). It returns
 *   `"REACHED_PROCESS…"` so the host sees a reach even where the secret is absent (spawn's child
 *   has a sanitised env). Anything else: `"no process"`.
 * - `attempt(fn)`: `pwn(fn())`, or `"threw <name>"`.
 * - `hostValues()`: every value this realm got from the host that an attacker could climb: the
 *   injected globals (not `globalThis`: the transformer's `block-global-this` refuses passing it on) (console, timers, `tools` and its functions), errors the runtime throws, and
 *   — when tools exist — a tool's result, its rejection, its pending promise and its validation
 *   and codec errors.
 *
 * Every name is a `const` in the program's scope: nothing is added to the global object.
 * The prelude never reads `.constructor` or names `process`, so the facade's CodeTransformer
 * judges each technique by the technique's own code.
 */
export function guestPrelude({ secretName, canaryPath }: PreludeSettings): string {
  return `const SECRET_NAME = ${JSON.stringify(secretName)};
const CANARY = ${JSON.stringify(canaryPath)};
const pwn = (p) => {
  let reached = false;
  try { reached = p !== null && p !== undefined && typeof p.pid === "number" && typeof p.env === "object"; } catch {}
  if (!reached) return "no process";
  let out = "REACHED_PROCESS";
  try { out += ":env=" + String(p.env[SECRET_NAME]); } catch { out += ":env-refused"; }
  const writers = [
    () => p.getBuiltinModule("fs").writeFileSync(CANARY, "escaped"),
    () => p.mainModule.require("fs").writeFileSync(CANARY, "escaped"),
    () => { const fs = p.getBuiltinModule("fs"); fs.writeFileSync(p.getBuiltinModule("buffer").Buffer.from(CANARY), "escaped"); },
    () => { const fs = p.getBuiltinModule("fs"); fs.writeFileSync(new TextEncoder().encode(CANARY), "escaped"); },
    () => { const b = p.binding("fs"); b.writeFileUtf8(CANARY, "escaped", 0x241, 0o644); },
  ];
  for (const write of writers) { try { write(); out += ":wrote"; break; } catch {} }
  return out;
};
const attempt = (fn) => { try { return pwn(fn()); } catch (e) { let name = "?"; try { name = String(e && e.name); } catch {} return "threw " + name; } };
const hostValues = async () => {
  const values = [console, console.log];
  if (typeof setTimeout === "function") values.push(setTimeout, setInterval, clearTimeout);
  if (typeof queueMicrotask === "function") values.push(queueMicrotask);
  if (typeof structuredClone === "function") values.push(structuredClone);
  if (typeof fs === "object") values.push(fs, fs.read);
  if (typeof fetch === "function") values.push(fetch);
  try { null.x; } catch (e) { values.push(e); }
  try { (function dive() { dive(); })(); } catch (e) { values.push(e); }
  try { new Proxy({}, {}).x.y; } catch (e) { values.push(e); }
  if (typeof tools === "object" && tools !== null) {
    values.push(tools);
    for (const name of Object.keys(tools)) values.push(tools[name]);
    try { values.push(await tools.echo({ value: { nested: [1] } })); } catch (e) { values.push(e); }
    try { values.push(await tools.hostValues({})); } catch (e) { values.push(e); }
    try { await tools.fail({}); } catch (e) { values.push(e); }
    try { await tools.echo("not an object"); } catch (e) { values.push(e); }
    try { await tools.echo({ value: () => 1 }); } catch (e) { values.push(e); }
    try { await tools.noSuchTool({}); } catch (e) { values.push(e); }
    const pending = tools.echo({ value: 2 });
    values.push(pending);
    try { await pending; } catch {}
  }
  return values;
};
`;
}
