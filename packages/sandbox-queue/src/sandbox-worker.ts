import { randomUUID } from "node:crypto";
import { engineLoader } from "@suaveplan/sandbox";
import { SANDBOX_CODES, SandboxError } from "@suaveplan/sandbox-core/error-codes";
import {
  failure,
  type HostCalls,
  type SandboxEngine,
  type SandboxResult,
} from "@suaveplan/sandbox-core/types";
import { type CallReply, createHostCodec } from "@suaveplan/sandbox-guest";
import { createToolRunner, normaliseTools, type ToolSet } from "@suaveplan/sandbox-tools";
import { type Job, WaitingError, Worker } from "bullmq";
import { CLOSE_MARGIN_MS, messageOf, settlesWithin } from "./bounded.js";
import { connectionFamily } from "./connection.js";
import { type Inbox, type InboxTransport, openInbox, transportOf } from "./inbox.js";
import {
  countOption,
  durationOption,
  queueAddress,
  refuseUnknownKeys,
  threadLockProblem,
  transportOption,
} from "./options.js";
import {
  dataModulesOf,
  INPUT_TOO_LARGE_TEXT,
  type JobData,
  JobDataSchema,
  PROTOCOL_VERSION,
  START_AFTER_MS,
  TOOL_INPUT_TOO_LARGE,
  type ToCaller,
  type ToWorker,
  type WireResult,
} from "./protocol.js";
import { toWire } from "./wire-result.js";

/** Options of {@link startSandboxWorker}. */
export interface SandboxWorkerOptions {
  /** Where Redis is: `redis://host:6379`, `unix:///path.sock`, a socket path, or ioredis options. Required. */
  connection: unknown;
  /** The queue to take jobs from. Default `"sandbox"`. */
  queue?: string;
  /** Key prefix in Redis. Default `"sandbox"`. */
  prefix?: string;
  /** The engines this worker runs; a job for another is refused with `SANDBOX_ENGINE_UNAVAILABLE`. Default `["isolate"]`. */
  engines?: readonly string[];
  /** Jobs run at once. Default 4. */
  concurrency?: number;
  /** How long a job's lock lasts without renewal; another worker takes a job whose lock ran out. Default `"30s"`. */
  lockDuration?: number | string;
  /** How often this worker looks for jobs whose worker died. Default `"30s"`. */
  stalledInterval?: number | string;
  /** This worker's inbox lease (how long it may be unreachable before callers' messages stop reaching it). Default `"10s"`. */
  lease?: number | string;
  /** On `close()`: how long running jobs may finish before they are stopped and handed back to the queue. Default `"10s"`. */
  drainTimeout?: number | string;
  /**
   * Tools that run here, on the worker (opt-in, for detached runs: e.g. a
   * `loadToolModule` file). Guests see them beside the caller's; a name on
   * both sides refuses the job with `SANDBOX_INVALID_CONFIG`. Unlike the
   * caller's tools they have no journal across workers: a call in flight when
   * this worker dies runs again on the next one (handlers get a stable call
   * id, `<executionId>#<n>`, for idempotency).
   */
  tools?: ToolSet;
  /** How inbox messages travel: `"relay"` (default) or `"queues"`; callers must use the same. */
  transport?: InboxTransport;
  /** How long to wait for Redis at start before rejecting with `SANDBOX_ENGINE_UNAVAILABLE`. Default `"10s"`. */
  startTimeout?: number | string;
}

const KNOWN = [
  "connection",
  "queue",
  "prefix",
  "engines",
  "concurrency",
  "lockDuration",
  "stalledInterval",
  "lease",
  "drainTimeout",
  "tools",
  "transport",
  "startTimeout",
] as const;

/** A running worker. */
export interface SandboxWorker {
  /** This worker's inbox address (in the callers' `start` messages). */
  readonly address: string;
  /** Executions running now. */
  readonly running: number;
  /**
   * Stop taking jobs, let running ones finish for `drainTimeout`, then stop
   * them and hand their jobs back to the queue (another worker replays them).
   * Releases every engine, connection and timer. Idempotent.
   */
  close(): Promise<void>;
}

/** Why an execution's guest is being stopped. */
const SHUTDOWN = "the worker is shutting down";
/** The job's lock could not be renewed: it is not this worker's any more (another took it over, or Redis lost it). */
const LOCK_LOST = "the job's lock is lost";

interface Running {
  job: Job<JobData>;
  controller: AbortController;
  /** Replies awaited, by call number. */
  replies: Map<number, (reply: CallReply) => void>;
}

/**
 * Take executions from the queue and run them on this machine's engines.
 * The worker holds no application secrets: the callers' tools run in the
 * callers, reached through their inboxes for every call.
 *
 * @example
 * const worker = await startSandboxWorker({ connection: "redis://127.0.0.1:6379", engines: ["isolate"] });
 * process.once("SIGTERM", () => void worker.close());
 */
export async function startSandboxWorker(options: SandboxWorkerOptions): Promise<SandboxWorker> {
  const root = "worker options";
  const input = options as unknown as Record<string, unknown>;
  if (typeof options !== "object" || options === null) {
    throw new SandboxError(
      SANDBOX_CODES.INVALID_CONFIG,
      `${root}: must be an object with at least { connection }`,
    );
  }
  refuseUnknownKeys(input, KNOWN, root);
  const address = queueAddress(input, root);
  const engines = options.engines ?? ["isolate"];
  if (!Array.isArray(engines) || engines.length === 0 || !engines.every((e) => typeof e === "string")) {
    throw new SandboxError(
      SANDBOX_CODES.INVALID_CONFIG,
      `${root}.engines: must be a non-empty list of engine names (got ${JSON.stringify(engines)})`,
    );
  }
  for (const engine of engines) engineLoader(engine); // an unknown name fails now, naming the registered ones
  const concurrency = countOption(input, "concurrency", root, 4);
  const lockDuration = durationOption(input, "lockDuration", root, 30_000);
  const stalledInterval = durationOption(input, "stalledInterval", root, 30_000);
  const leaseMs = durationOption(input, "lease", root, 10_000);
  const drainMs = durationOption(input, "drainTimeout", root, 10_000);
  const startMs = durationOption(input, "startTimeout", root, 10_000);
  const workerTools = normaliseTools(options.tools, "config");
  const transport = transportOption(input, root);

  const codec = createHostCodec();
  // Results keep their Error stacks: they are guest-only (the engine made them) and go to the caller, not a guest.
  const resultCodec = createHostCodec({ keepStacks: true });
  const running = new Map<string, Running>();
  const engineCache = new Map<string, Promise<SandboxEngine>>();
  const client = address.redis();
  client.on("error", () => undefined); // ioredis reconnects; BullMQ resumes when it does
  const connections = connectionFamily(client);

  const receive = (raw: unknown) => {
    const message = raw as ToWorker;
    const run = running.get(message?.x);
    if (run === undefined) return;
    if (message.t === "cancel") run.controller.abort(message.reason);
    else if (message.t === "reply") run.replies.get(message.n)?.(message.reply);
  };
  let inbox: Inbox;
  // ioredis retries an unreachable Redis for ever: the start is bounded, naming the last connection error.
  let lastError = "no answer";
  client.on("error", (error: Error) => {
    lastError = error.message;
  });
  let timer: NodeJS.Timeout | undefined;
  const opening = openInbox(transport, {
    client,
    prefix: address.prefix,
    namespace: address.queue,
    leaseMs,
    receive,
    onError: () => undefined,
  });
  try {
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`no answer within startTimeout (${startMs} ms); last: ${lastError}`)),
        startMs,
      );
    });
    inbox = await Promise.race([opening, late]);
  } catch (error) {
    client.disconnect();
    void opening.then((opened) => opened.close()).catch(() => undefined);
    throw new SandboxError(
      SANDBOX_CODES.ENGINE_UNAVAILABLE,
      `Cannot reach the queue's Redis: ${messageOf(error)}`,
      {
        cause: error,
      },
    );
  } finally {
    clearTimeout(timer);
  }
  const tell = (to: string, message: ToCaller) => inbox.send(to, message).catch(() => false);

  const newEngine = async (data: JobData): Promise<SandboxEngine> => {
    const factory = await engineLoader(data.engine)();
    return factory.create({ limits: data.limits, options: data.engineOptions });
  };
  // One engine per (engine, options), shared by the jobs without modules.
  const engineFor = (data: JobData): Promise<SandboxEngine> => {
    const key = `${data.engine}\0${JSON.stringify(data.engineOptions)}`;
    let engine = engineCache.get(key);
    if (engine === undefined) {
      engine = newEngine(data);
      engineCache.set(key, engine);
      engine.catch(() => engineCache.delete(key));
    }
    return engine;
  };

  const run = async (job: Job<JobData>, token: string | undefined, signal: AbortSignal | undefined) => {
    const parsed = JobDataSchema.safeParse(job.data);
    const dataModules = parsed.success ? dataModulesOf(parsed.data.modulesText) : undefined;
    if (!parsed.success || dataModules === undefined) {
      return toWire(
        failure(
          SANDBOX_CODES.INVALID_OPTIONS,
          `The job is not a sandbox execution this worker understands (protocol v${PROTOCOL_VERSION})`,
        ),
        codec,
      );
    }
    const data = parsed.data;
    const attempt = token ?? randomUUID();
    if (transportOf(data.caller) !== transport) {
      // The caller's inbox is on the other transport: nothing can reach it, not even this refusal.
      return toWire(
        failure(
          SANDBOX_CODES.INVALID_CONFIG,
          `The caller's inbox uses transport "${transportOf(data.caller)}" and this worker "${transport}"; give both the same transport`,
        ),
        codec,
      );
    }
    // A refused job's `done` is its attempt's only message (it tells the caller who refused it).
    const refuse = async (result: SandboxResult): Promise<WireResult> => {
      const wire = toWire(result, codec);
      await tell(data.caller, { t: "done", x: data.x, a: attempt, w: inbox.address, result: wire });
      return wire;
    };
    if (!engines.includes(data.engine)) {
      return refuse(
        failure(
          SANDBOX_CODES.ENGINE_UNAVAILABLE,
          `This worker runs only ${engines.map((e) => `"${e}"`).join(", ")}; the job asks for "${data.engine}" (start workers with --engine ${data.engine})`,
        ),
      );
    }
    const threadProblem = threadLockProblem(data.engine, data.limits.timeout, lockDuration);
    if (threadProblem !== undefined) {
      return refuse(failure(SANDBOX_CODES.INVALID_OPTIONS, `options.timeout: ${threadProblem}`));
    }
    const both = data.tools.filter((name) => workerTools.names.includes(name));
    if (both.length > 0) {
      return refuse(
        failure(
          SANDBOX_CODES.INVALID_CONFIG,
          `tools ${both.map((n) => `"${n}"`).join(", ")}: defined both by the caller and on this worker; rename one side`,
        ),
      );
    }
    const controller = new AbortController();
    const onSignal = () => controller.abort(signal?.reason ?? "cancelled");
    signal?.addEventListener("abort", onSignal, { once: true });
    const entry: Running = { job, controller, replies: new Map() };
    running.set(data.x, entry);
    // Liveness: the caller's inbox must still be there, or nobody waits for this run.
    const alive = setInterval(
      () => {
        // Only a delivery to nobody means the caller is gone; Redis being unreachable says nothing about it.
        inbox.send(data.caller, { t: "alive", x: data.x } satisfies ToCaller).then(
          (delivered) => {
            if (!delivered) controller.abort("the caller is gone");
          },
          () => undefined,
        );
      },
      Math.max(50, Math.floor(leaseMs / 3)),
    );
    // The caller learns who runs the job from the attempt's first message; a run that says nothing for a while announces itself.
    let announce: NodeJS.Timeout | undefined = setTimeout(() => {
      announce = undefined;
      void tell(data.caller, { t: "start", x: data.x, a: attempt, w: inbox.address });
    }, START_AFTER_MS);
    const say = (message: ToCaller) => {
      clearTimeout(announce);
      announce = undefined;
      return tell(data.caller, message);
    };
    try {
      let seq = 0;
      let calls = 0;
      // Worker-side tools run through the same runner the facade uses (validation, limits, a journal per run).
      const local =
        workerTools.names.length === 0
          ? undefined
          : createToolRunner({ tools: workerTools, signal: controller.signal });
      const relay = async (n: number, name: string, input: unknown): Promise<unknown> => {
        const text =
          input === TOOL_INPUT_TOO_LARGE
            ? INPUT_TOO_LARGE_TEXT
            : codec.encode(input, "input", Number.MAX_SAFE_INTEGER);
        const reply = await new Promise<CallReply>((resolve, reject) => {
          const stop = () => reject(new Error("the execution ended"));
          controller.signal.addEventListener("abort", stop, { once: true });
          entry.replies.set(n, (answer) => {
            controller.signal.removeEventListener("abort", stop);
            resolve(answer);
          });
          void say({
            t: "call",
            x: data.x,
            a: attempt,
            w: inbox.address,
            n,
            name,
            input: text,
          });
        });
        entry.replies.delete(n);
        if (reply.ok) return codec.decode(reply.text);
        const failed = JSON.parse(reply.text) as { name: string; message: string; tool?: string };
        throw Object.assign(new Error(failed.message), {
          name: failed.name,
          ...(failed.tool === undefined ? {} : { tool: failed.tool }),
        });
      };
      const names = [...data.tools, ...workerTools.names];
      const hostCalls: HostCalls | undefined =
        names.length === 0
          ? undefined
          : {
              names,
              ...(data.maxCallBytes === undefined ? {} : { maxCallBytes: data.maxCallBytes }),
              ...(data.maxReplyBytes === undefined ? {} : { maxReplyBytes: data.maxReplyBytes }),
              // One numbering for both kinds of call: the n-th call of a replay has the n-th call's id.
              call: (name, input) => {
                const n = ++calls;
                return local !== undefined && !data.tools.includes(name)
                  ? local.call(name, input, `${data.x}#${n}`)
                  : relay(n, name, input);
              },
            };
      // Registered modules are per sandbox: a job with modules gets an engine of its own, released after it.
      const modules = dataModules.length > 0 || data.sourceModules.length > 0;
      const engine = modules ? await newEngine(data) : await engineFor(data);
      // Data modules arrive as the caller's codec text, so a Map or a Date in them arrives as it was registered.
      for (const [name, text] of dataModules) engine.registerModule({ name, exports: codec.decode(text) });
      for (const module of data.sourceModules) engine.registerModule(module);
      let result: SandboxResult;
      try {
        result = await engine.execute(data.code, codec.decode(data.context) as Record<string, unknown>, {
          ...data.limits,
          signal: controller.signal,
          onLog: (logEntry) => {
            seq += 1;
            void say({ t: "log", x: data.x, a: attempt, w: inbox.address, s: seq, entry: logEntry });
          },
          ...(hostCalls === undefined ? {} : { hostCalls }),
        });
      } finally {
        local?.abortAll("the execution ended");
        local?.close();
        if (modules) await engine.destroy();
      }
      if (controller.signal.reason === SHUTDOWN && token !== undefined) {
        // Stopped by close(): hand the job back, so another worker runs it (its tool calls replay from the caller's journal).
        await job.moveToWait(token);
        throw new WaitingError();
      }
      if (controller.signal.reason === LOCK_LOST) {
        // Nobody waits for this run: the caller hears from the worker that took the job over, or finds it gone (SANDBOX_DISPATCH_LOST).
        throw new Error(LOCK_LOST);
      }
      const wire: WireResult = toWire(result, resultCodec);
      await say({ t: "done", x: data.x, a: attempt, w: inbox.address, result: wire });
      return wire;
    } finally {
      clearTimeout(announce);
      clearInterval(alive);
      signal?.removeEventListener("abort", onSignal);
      running.delete(data.x);
    }
  };

  const worker = new Worker<JobData, WireResult>(address.queue, run, {
    connection: client,
    prefix: address.prefix,
    concurrency,
    lockDuration,
    stalledInterval,
    maxStalledCount: 1,
  });
  worker.on("error", () => undefined);
  // A job whose lock is lost is not this worker's any more: stop its guest, so the slot serves the next job.
  worker.on("lockRenewalFailed", (jobIds: string[]) => {
    for (const id of jobIds) running.get(id)?.controller.abort(LOCK_LOST);
  });

  let closing: Promise<void> | undefined;
  return {
    address: inbox.address,
    get running() {
      return running.size;
    },
    close() {
      closing ??= (async () => {
        // With Redis unreachable, BullMQ's graceful close waits for its blocking connection to end, which
        // ioredis never reports for a connection that is reconnecting: then nothing is waited for.
        const drained = worker.close(client.status !== "ready");
        const stop = setTimeout(() => {
          for (const entry of running.values()) entry.controller.abort(SHUTDOWN);
        }, drainMs);
        // BullMQ's close waits for Redis: with Redis gone its commands wait in ioredis' offline queue for ever.
        const done = await closedOrStuck(drained, drainMs + CLOSE_MARGIN_MS, () => running.size === 0);
        clearTimeout(stop);
        if (!done) {
          // Ending the connections fails those commands, so BullMQ's close can finish (and stop its timers).
          connections.endAll();
          await settlesWithin(drained, CLOSE_MARGIN_MS);
        }
        for (const engine of engineCache.values())
          await engine.then((e) => e.destroy()).catch(() => undefined);
        // The inbox's goodbye to an unreachable Redis would wait too.
        if (client.status !== "ready") connections.endAll();
        await settlesWithin(inbox.close(), CLOSE_MARGIN_MS);
        connections.endAll();
      })();
      return closing;
    },
  };

  /**
   * Whether `drained` settled within `ms`; false sooner once Redis is
   * unreachable and no run is left (nothing BullMQ waits for can come then).
   */
  function closedOrStuck(drained: Promise<unknown>, ms: number, idle: () => boolean): Promise<boolean> {
    return new Promise((resolve) => {
      const timers: NodeJS.Timeout[] = [];
      const give = (value: boolean) => {
        for (const timer of timers) clearTimeout(timer);
        resolve(value);
      };
      timers.push(
        setInterval(() => {
          if (client.status !== "ready" && idle()) give(false);
        }, 50),
        setTimeout(() => give(false), ms),
      );
      drained.then(
        () => give(true),
        () => give(true),
      );
    });
  }
}
