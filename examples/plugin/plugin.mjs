// An example plugin: an ES module run inside @suaveplan/api-sandbox-vm. It sees only the
// FrozenGlobals plus the permission-checked `fs` and `fetch` capability proxies.
import { formatReport } from "./lib/format.mjs";

export async function run({ apiUrl }) {
  const greeting = (await fs.read("data/greeting.txt", "utf8")).trim();
  const response = await fetch(new URL("/weather?city=Oslo", apiUrl));
  const weather = await response.json();
  console.info(`fetched ${response.url} -> ${response.status}`);

  // Not granted by the policy: refused inside the sandbox, the host adapter is never called.
  let outsideRead;
  try {
    await fs.read("../../package.json", "utf8");
    outsideRead = "allowed?!";
  } catch (error) {
    outsideRead = error.code;
  }
  return formatReport({ greeting, weather, outsideRead });
}
