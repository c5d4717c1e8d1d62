// Run the example plugin from the BUILT package:
//   pnpm --filter @suaveplan/api-sandbox-vm... build && node examples/plugin/run-plugin.mjs
import { createServer } from "node:http";
import { fileURLToPath } from "node:url";

async function loadPackage() {
  try {
    return await import("@suaveplan/api-sandbox-vm");
  } catch {
    // examples/ is not a workspace package, so the name may not resolve: use the build output.
    return import(new URL("../../packages/api-sandbox-vm/dist/index.js", import.meta.url).href);
  }
}

const { createVmSandbox } = await loadPackage();

const server = createServer((request, response) => {
  response.writeHead(200, { "content-type": "application/json" });
  response.end(
    JSON.stringify({
      city: new URL(request.url, "http://x").searchParams.get("city"),
      temperatureC: 4,
      sky: "drizzle",
    }),
  );
});
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const apiUrl = `http://127.0.0.1:${server.address().port}`;

const sandbox = await createVmSandbox({
  pluginModulePath: fileURLToPath(new URL("./plugin.mjs", import.meta.url)),
  policy: { fs: [{ path: "data/**", access: "read" }], fetch: [apiUrl] },
  onLog: (entry) => console.log(`[plugin ${entry.level}] ${entry.message}`),
  timeoutMs: 5_000,
});
try {
  const result = await sandbox.call("run", { apiUrl });
  console.log(JSON.stringify(result, null, 2));
} finally {
  await sandbox.dispose();
  server.close();
}
