import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { type Counter, createNoopMeter, type Meter, type MeterProvider } from "@opentelemetry/api";
import { expect } from "vitest";
import type { VmSandboxHandle } from "../sandbox/create-vm-sandbox.js";
import type { VmSandboxOptions } from "../sandbox/vm-sandbox-options.js";

/** Builds a sandbox for one scenario (for the in-package fixture: `createVmSandbox`). */
export type MakeVmSandbox = (options: VmSandboxOptions) => Promise<VmSandboxHandle>;

/** Reads `plugin.permission_denied_total` by `capability`. */
export interface DenialMetrics {
  readonly meterProvider: MeterProvider;
  read(): Promise<Record<string, number>>;
}

/** One request a scenario's HTTP server received. */
export interface ReceivedRequest {
  method: string;
  url: string;
}

/** A real HTTP server on 127.0.0.1 with an ephemeral port that counts what it receives. */
export interface ScenarioServer {
  readonly origin: string;
  readonly requests: ReceivedRequest[];
}

/** What a scenario gets. Everything it creates is released by `cleanup()`. */
export interface ConformanceEnv {
  readonly metrics: DenialMetrics;
  /** `expect.assertions(n)` for counted escape scenarios (a no-op where a scenario is expected to fail). */
  assertions(count: number): void;
  sandbox(options: VmSandboxOptions): Promise<VmSandboxHandle>;
  /** Write files into a fresh temp folder (real path); `symlinks` maps link name → target. */
  plugin(
    files: Record<string, string>,
    symlinks?: Record<string, string>,
  ): Promise<{ dir: string; entry: string }>;
  server(handler?: (request: IncomingMessage, response: ServerResponse) => void): Promise<ScenarioServer>;
  cleanup(): Promise<void>;
}

/**
 * A MeterProvider that records counter additions in memory, built on `@opentelemetry/api` alone
 * (the harness cannot depend on an SDK). Instruments other than counters are no-ops.
 */
export function createRecordingMetrics(): DenialMetrics {
  const totals = new Map<string, number>();
  const noop = createNoopMeter();
  const meter: Meter = Object.create(noop, {
    createCounter: {
      value: (name: string): Counter => {
        const counter: Counter = Object.create(noop.createCounter(name), {
          add: {
            value: (value: number, attributes?: Record<string, unknown>) => {
              if (name !== "plugin.permission_denied_total") return;
              const key = String(attributes?.capability);
              totals.set(key, (totals.get(key) ?? 0) + value);
            },
          },
        });
        return counter;
      },
    },
  });
  return {
    meterProvider: { getMeter: () => meter },
    read: async () => Object.fromEntries(totals),
  };
}

/**
 * A fresh environment; pass `metrics` to read the denial counter through a real SDK reader, and
 * `assertions` to replace `expect.assertions` (the harness self-test runs scenarios that must fail).
 */
export function createConformanceEnv(
  makeSandbox: MakeVmSandbox,
  metrics: DenialMetrics = createRecordingMetrics(),
  assertions: (count: number) => void = (count) => expect.assertions(count),
): ConformanceEnv {
  const sandboxes: VmSandboxHandle[] = [];
  const dirs: string[] = [];
  const closers: (() => Promise<void>)[] = [];
  return {
    metrics,
    assertions,
    async sandbox(options) {
      const handle = await makeSandbox(options);
      sandboxes.push(handle);
      return handle;
    },
    async plugin(files, symlinks = {}) {
      const dir = await realpath(await mkdtemp(join(tmpdir(), "vm-sandbox-conformance-")));
      dirs.push(dir);
      for (const [name, text] of Object.entries(files)) {
        await mkdir(dirname(join(dir, name)), { recursive: true });
        await writeFile(join(dir, name), text);
      }
      for (const [name, target] of Object.entries(symlinks)) {
        await mkdir(dirname(join(dir, name)), { recursive: true });
        await symlink(target, join(dir, name));
      }
      return { dir, entry: join(dir, "plugin.mjs") };
    },
    async server(handler) {
      const requests: ReceivedRequest[] = [];
      const server = createServer((request, response) => {
        requests.push({ method: request.method ?? "", url: request.url ?? "" });
        if (handler !== undefined) handler(request, response);
        else response.end("ok");
      });
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      closers.push(
        () =>
          new Promise<void>((resolve) => {
            server.closeAllConnections();
            server.close(() => resolve());
          }),
      );
      return { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
    },
    async cleanup() {
      await Promise.all(sandboxes.splice(0).map((s) => s.dispose()));
      await Promise.all(closers.splice(0).map((close) => close()));
      await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
    },
  };
}
