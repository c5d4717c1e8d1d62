// A queue worker in a process of its own for the bench, as production runs one:
// `node worker.mjs '<startSandboxWorker options JSON>'`. Prints "ready <address>"
// once it takes jobs; SIGTERM closes it gracefully; it exits when the bench's
// IPC channel closes (the bench ended or died), so no worker outlives it.
import { startSandboxWorker } from "../dist/index.js";

const worker = await startSandboxWorker(JSON.parse(process.argv[2] ?? "{}"));
process.stdout.write(`ready ${worker.address}\n`);
const stop = () => void worker.close().then(() => process.exit(0));
process.once("SIGTERM", stop);
process.once("disconnect", () => process.exit(1));
