import { writeSync } from "node:fs";
import type { RunnerFrame } from "./protocol.js";

/** Where the runner sends its frames. */
export interface FrameSink {
  /** Deliver one frame, synchronously (a console line must be out before guest code continues). */
  write(frame: RunnerFrame): void;
}

/**
 * A sink writing newline-delimited JSON frames synchronously to `fd`. Exits
 * the process quietly once the host stopped listening (EPIPE): a child whose
 * host is gone has nobody to run for.
 */
export function createFdSink(fd: number): FrameSink {
  const pause = new Int32Array(new SharedArrayBuffer(4));
  return {
    write(frame) {
      const bytes = Buffer.from(`${JSON.stringify(frame)}\n`, "utf8");
      let offset = 0;
      while (offset < bytes.byteLength) {
        try {
          offset += writeSync(fd, bytes, offset);
        } catch (error) {
          const code = (error as NodeJS.ErrnoException).code;
          if (code === "EAGAIN") {
            Atomics.wait(pause, 0, 0, 1);
            continue;
          }
          if (code === "EBADF") {
            process.stderr.write(`runner: fd ${fd} is not open; this script is spawned by SpawnEngine\n`);
            process.exit(64);
          }
          process.exit(0); // EPIPE: the host stopped listening
        }
      }
    },
  };
}
