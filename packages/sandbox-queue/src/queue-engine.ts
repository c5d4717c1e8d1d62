import { randomUUID } from "node:crypto";
import { SANDBOX_CODES, SandboxError } from "@suaveplan/sandbox-core/error-codes";
import {
  type EngineCapabilities,
  type EngineLimits,
  failure,
  type HostCalls,
  type LogEntry,
  type SandboxOptions,
  type SandboxResult,
} from "@suaveplan/sandbox-core/types";
import {
  answerCall,
  type CallReply,
  checkExecutionInput,
  contextCopyFailure,
  createHostCodec,
  type DisposedWording,
  type EngineRun,
  EngineShellBase,
  type PreparedRun,
} from "@suaveplan/sandbox-guest";
import { Queue } from "bullmq";
import type { Redis } from "ioredis";
import { bounded, CLOSE_MARGIN_MS, messageOf, settlesWithin } from "./bounded.js";
import { type ConnectionFamily, connectionFamily } from "./connection.js";
import { type Inbox, type InboxTransport, openInbox } from "./inbox.js";
import {
  countOption,
  durationOption,
  type QueueAddress,
  queueAddress,
  refuseUnknownKeys,
  threadLockProblem,
  transportOption,
} from "./options.js";
import { type JobData, PROTOCOL_VERSION, type ToCaller, type WireResult } from "./protocol.js";
import { fromWire } from "./wire-result.js";

/** The `engineOptions` of `createSandbox({ engine: "queue" })`. */
export interface QueueEngineOptions {
  /** Where Redis is: `redis://host:6379`, `unix:///path.sock`, a socket path, or ioredis options. Required. */
  connection: unknown;
  /** The queue's name (the workers' `--queue`). Default `"sandbox"`. */
  queue?: string;
  /** Key prefix in Redis. Default `"sandbox"`. */
  prefix?: string;
  /** The engine the workers run the code on. Default `"isolate"`. */
  remoteEngine?: string;
  /** Engine options for `remoteEngine` on the worker (plain data). */
  remoteEngineOptions?: Record<string, unknown>;
  /** How long a job may wait for a worker before it is removed and resolves `SANDBOX_DISPATCH_TIMEOUT`. Default `"30s"`. */
  dispatchTimeout?: number | string;
  /** Refuse new jobs with `SANDBOX_RATE_LIMITED` when this many wait already. Default: no limit. */
  maxWaiting?: number;
  /** The caller's inbox lease: a worker aborts the guest when the caller has been gone this long. Default `"10s"`. */
  lease?: number | string;
  /** How often pending jobs are looked up in Redis (a lost job resolves `SANDBOX_DISPATCH_LOST` within this). Default `"1s"`. */
  pollInterval?: number | string;
  /** After a worker took the job: how long past `timeout` to wait for its result before `SANDBOX_DISPATCH_LOST`. Default `"60s"` (the workers' lock duration plus stall interval). */
  lostAfter?: number | string;
  /** The workers' lock duration (for the `vm` check). Default `"30s"`, BullMQ's. */
  lockDuration?: number | string;
  /** How long finished jobs (and so their results, for a repeated execution id) stay in Redis. Default `"1h"`. */
  keepResults?: number | string;
  /** How inbox messages travel: `"relay"` (BullMQ's Relay, default) or `"queues"` (plain BullMQ queues); workers must use the same. */
  transport?: InboxTransport;
}

const KNOWN = [
  "connection",
  "queue",
  "prefix",
  "remoteEngine",
  "remoteEngineOptions",
  "dispatchTimeout",
  "maxWaiting",
  "lease",
  "pollInterval",
  "lostAfter",
  "lockDuration",
  "keepResults",
  "transport",
] as const;

interface Settings {
  address: QueueAddress;
  remoteEngine: string;
  remoteEngineOptions: Record<string, unknown>;
  dispatchTimeout: number;
  maxWaiting: number;
  leaseMs: number;
  pollMs: number;
  lostAfter: number;
  lockDuration: number;
  keepSeconds: number;
  transport: InboxTransport;
}

function settingsOf(options: Record<string, unknown>): Settings {
  const root = "engineOptions";
  refuseUnknownKeys(options, KNOWN, root);
  const remoteEngine = options.remoteEngine ?? "isolate";
  if (typeof remoteEngine !== "string" || remoteEngine === "queue") {
    throw new SandboxError(
      SANDBOX_CODES.INVALID_CONFIG,
      `${root}.remoteEngine: must name the engine the workers run (vm, worker, spawn, isolate, quickjs or one they registered), not ${JSON.stringify(remoteEngine)}`,
    );
  }
  const remoteEngineOptions = options.remoteEngineOptions ?? {};
  if (
    typeof remoteEngineOptions !== "object" ||
    remoteEngineOptions === null ||
    Array.isArray(remoteEngineOptions)
  ) {
    throw new SandboxError(
      SANDBOX_CODES.INVALID_CONFIG,
      `${root}.remoteEngineOptions: must be an object of plain data for the remote engine`,
    );
  }
  return {
    address: queueAddress(options, root),
    remoteEngine,
    remoteEngineOptions: remoteEngineOptions as Record<string, unknown>,
    dispatchTimeout: durationOption(options, "dispatchTimeout", root, 30_000),
    maxWaiting: countOption(options, "maxWaiting", root, Number.POSITIVE_INFINITY),
    leaseMs: durationOption(options, "lease", root, 10_000),
    pollMs: durationOption(options, "pollInterval", root, 1000),
    lostAfter: durationOption(options, "lostAfter", root, 60_000),
    lockDuration: durationOption(options, "lockDuration", root, 30_000),
    keepSeconds: Math.ceil(durationOption(options, "keepResults", root, 3_600_000) / 1000),
    transport: transportOption(options, root),
  };
}

/** How many job states one poll round asks for at once (ioredis sends them back to back on one connection). */
const POLL_BATCH = 256;

/** One journal entry: a tool call the caller answered, kept to answer a replay the same way. */
interface JournalEntry {
  name: string;
  input: string;
  reply: Promise<CallReply>;
}

/** One execution checked, with its context encoded: what `start` puts on the queue. */
interface QueuedRun extends PreparedRun {
  code: string;
  /** The context as codec text. */
  contextText: string;
  limits: EngineLimits;
  options: SandboxOptions;
}

/** What the shell's "destroyed" guards say for the queue engine. */
const DISPOSED: DisposedWording = {
  execute: "The queue engine was destroyed; create a new sandbox",
  registerModule: "The queue engine was destroyed; create a new sandbox",
  running: "The sandbox was destroyed while the job ran",
};

/** An execution this caller waits for. */
interface Pending {
  x: string;
  /** Another submission owns the execution: only its result reaches this one. */
  follower: boolean;
  /** The attempt running now (the worker's job token) and its worker's inbox. */
  attempt?: string;
  worker?: string;
  /** Every attempt heard from: a superseded one's late messages are ignored. */
  attempts: Set<string>;
  cancelled: boolean;
  settled: boolean;
  /** The job is in Redis: until then the poller must not take its absence for a loss. */
  queued: boolean;
  hostCalls?: HostCalls;
  onLog?: (entry: LogEntry) => void;
  /** Log lines delivered to `onLog`: a replay's first lines are not delivered again. */
  logsDelivered: number;
  journal: Map<number, JournalEntry>;
  timer?: NodeJS.Timeout;
  deadline: number;
  /**
   * The run's own timeout (ms), as its job carries it (a follower's: the
   * followed job's): the lost deadlines count from it, not from the engine's default.
   */
  timeout: number;
  settle(result: SandboxResult): void;
}

interface Shared {
  client: Redis;
  connections: ConnectionFamily;
  queue: Queue;
  inbox: Inbox;
  poller: NodeJS.Timeout;
}

/**
 * The caller side of the queue: `execute` puts the run on a BullMQ queue,
 * a worker (`startSandboxWorker`, `suaveplan-sandbox worker`) runs it on its
 * own engine, and the same `SandboxResult` comes back. Tool calls, logs and
 * cancellation travel through this process's inbox, so tools run here.
 * The modules, the "destroyed" guards, `options.signal` and `destroy()` are
 * the engine shell's; a job carries the modules as the shell holds them.
 */
export class QueueEngine extends EngineShellBase<QueuedRun> {
  readonly name = "queue";
  readonly capabilities: EngineCapabilities;
  private readonly settings: Settings;
  private readonly pending = new Map<string, Pending>();
  private readonly codec = createHostCodec();
  /** Decodes what workers send: guest values whose Error stacks are guest-only already. */
  private readonly resultCodec = createHostCodec({ keepStacks: true });
  private shared: Promise<Shared> | undefined;
  private connections: ConnectionFamily | undefined;

  constructor(
    limits: EngineLimits,
    options: Record<string, unknown>,
    remoteCapabilities?: EngineCapabilities,
  ) {
    super(DISPOSED, limits);
    this.settings = settingsOf(options);
    const problem = threadLockProblem(this.settings.remoteEngine, limits.timeout, this.settings.lockDuration);
    if (problem !== undefined)
      throw new SandboxError(SANDBOX_CODES.INVALID_CONFIG, `engineOptions.remoteEngine: ${problem}`);
    this.capabilities = queueCapabilities(this.settings.remoteEngine, remoteCapabilities);
  }

  /** The input checked as every engine checks it, and the context encoded as the job carries it. */
  protected prepare(
    code: string,
    context: Record<string, unknown> | undefined,
    options: SandboxOptions | undefined,
  ): QueuedRun | { ok: false; result: SandboxResult } {
    const checked = checkExecutionInput(code, context, options);
    if (!checked.ok) return checked;
    const opts = checked.options;
    const limits = {
      timeout: opts.timeout ?? this.limits.timeout,
      memoryLimit: opts.memoryLimit ?? this.limits.memoryLimit,
      maxOutputSize: opts.maxOutputSize ?? this.limits.maxOutputSize,
    };
    const threadProblem = threadLockProblem(
      this.settings.remoteEngine,
      limits.timeout,
      this.settings.lockDuration,
    );
    if (threadProblem !== undefined)
      return {
        ok: false,
        result: failure(SANDBOX_CODES.INVALID_OPTIONS, `options.timeout: ${threadProblem}`),
      };
    let contextText: string;
    try {
      contextText = this.codec.encode(context ?? {}, "context", Number.MAX_SAFE_INTEGER);
    } catch (error) {
      return { ok: false, result: contextCopyFailure(error, this.codec) };
    }
    return { ok: true, signal: opts.signal, code: checked.code, contextText, limits, options: opts };
  }

  /** Reach Redis, put the job on the queue, and wait for its result (the shell wires the signal and `destroy()`). */
  protected async start(ready: QueuedRun, started: number): Promise<EngineRun | SandboxResult> {
    let shared: Shared | undefined;
    try {
      shared = await bounded(this.connect(), this.settings.dispatchTimeout, undefined);
    } catch (error) {
      return failure(SANDBOX_CODES.ENGINE_UNAVAILABLE, `Cannot reach the queue's Redis: ${messageOf(error)}`);
    }
    if (shared === undefined) {
      return failure(
        SANDBOX_CODES.ENGINE_UNAVAILABLE,
        `Cannot reach the queue's Redis within dispatchTimeout (${this.settings.dispatchTimeout} ms)`,
      );
    }
    const { settings } = this;
    const opts = ready.options;
    if (Number.isFinite(settings.maxWaiting)) {
      let waiting: number;
      try {
        waiting = await shared.queue.getWaitingCount();
      } catch (error) {
        return failure(
          SANDBOX_CODES.ENGINE_UNAVAILABLE,
          `Cannot reach the queue's Redis: ${messageOf(error)}`,
        );
      }
      if (waiting >= settings.maxWaiting) {
        return failure(
          SANDBOX_CODES.RATE_LIMITED,
          `The queue ${JSON.stringify(settings.address.queue)} has ${waiting} jobs waiting (maxWaiting ${settings.maxWaiting}); retry later or start more workers`,
        );
      }
    }
    const x = opts.executionId ?? randomUUID();
    const nonce = randomUUID();
    const data: JobData = {
      v: PROTOCOL_VERSION,
      x,
      caller: shared.inbox.address,
      nonce,
      engine: settings.remoteEngine,
      engineOptions: settings.remoteEngineOptions,
      code: ready.code,
      context: ready.contextText,
      modulesText: this.modules.modulesText(),
      sourceModules: this.modules.sourceModules(),
      limits: ready.limits,
      tools: [...(opts.hostCalls?.names ?? [])],
      ...(opts.hostCalls?.maxCallBytes === undefined ? {} : { maxCallBytes: opts.hostCalls.maxCallBytes }),
      ...(opts.hostCalls?.maxReplyBytes === undefined ? {} : { maxReplyBytes: opts.hostCalls.maxReplyBytes }),
    };
    let resolve!: (result: SandboxResult) => void;
    const finished = new Promise<SandboxResult>((r) => {
      resolve = r;
    });
    const pending: Pending = {
      x,
      follower: false,
      cancelled: false,
      settled: false,
      queued: false,
      ...(opts.hostCalls === undefined ? {} : { hostCalls: opts.hostCalls }),
      ...(opts.onLog === undefined ? {} : { onLog: opts.onLog }),
      logsDelivered: 0,
      attempts: new Set(),
      journal: new Map(),
      deadline: Date.now() + settings.dispatchTimeout,
      timeout: ready.limits.timeout,
      settle: (result) => {
        if (pending.settled) return;
        pending.settled = true;
        clearTimeout(pending.timer);
        // A cancelled run stays known until its worker hears the cancel (see `receive`).
        if (!pending.cancelled || pending.worker !== undefined) this.forget(pending);
        resolve(result.duration === 0 ? { ...result, duration: performance.now() - started } : result);
      },
    };
    const owner = this.pending.get(x);
    if (owner === undefined) this.pending.set(x, pending);
    else {
      pending.follower = true;
      pending.timeout = owner.timeout; // it waits on the owner's job, which runs for the owner's timeout
    }
    void this.submit(shared, pending, data, nonce, opts.executionId !== undefined);
    return {
      // The shell ends a run for `options.signal` (cancelled) or `destroy()` (disposed).
      abort: (outcome) => {
        if (outcome.kind === "disposed")
          pending.settle(failure(SANDBOX_CODES.ENGINE_DISPOSED, outcome.message));
        else this.cancel(pending);
      },
      result: finished,
    };
  }

  private async submit(
    shared: Shared,
    pending: Pending,
    data: JobData,
    nonce: string,
    chosenId: boolean,
  ): Promise<void> {
    // Armed before the add: a Redis that stopped answering must not hold the caller past dispatchTimeout.
    this.arm(pending, this.settings.dispatchTimeout, () => void this.dispatchTimedOut(pending));
    try {
      await shared.queue.add("run", data, {
        jobId: pending.x,
        removeOnComplete: { age: this.settings.keepSeconds },
        removeOnFail: { age: this.settings.keepSeconds },
      });
      pending.queued = true;
      if (!pending.follower && chosenId) {
        // An existing job with this id (from another caller, or an earlier run) keeps its data: follow it.
        // (A fresh UUID cannot meet an existing job: the look-up is only for ids the caller chose.)
        const stored = await shared.queue.getJob(pending.x);
        const theirs = stored?.data as JobData | undefined;
        if (stored !== undefined && theirs?.nonce !== nonce) {
          pending.follower = true;
          // It waits on that job, which runs for the timeout it was queued with.
          if (typeof theirs?.limits?.timeout === "number") pending.timeout = theirs.limits.timeout;
          this.forget(pending);
        }
      }
    } catch (error) {
      pending.settle(failure(SANDBOX_CODES.ENGINE_UNAVAILABLE, `Cannot queue the job: ${messageOf(error)}`));
      return;
    }
    if (pending.follower) {
      clearTimeout(pending.timer);
      this.followers.add(pending);
      pending.deadline =
        Date.now() + this.settings.dispatchTimeout + pending.timeout + this.settings.lostAfter;
    }
  }

  /** Executions following another submission of the same id: only polled. */
  private readonly followers = new Set<Pending>();

  private arm(pending: Pending, ms: number, fire: () => void): void {
    clearTimeout(pending.timer);
    pending.deadline = Date.now() + ms;
    pending.timer = setTimeout(fire, ms);
  }

  private async dispatchTimedOut(pending: Pending): Promise<void> {
    if (pending.settled || pending.attempt !== undefined) return;
    const shared = await this.shared;
    // Being removed here: the poller must not report its absence as SANDBOX_DISPATCH_LOST meanwhile.
    pending.queued = false;
    // A job a worker just took cannot be removed (it is locked): then wait for it as for any started job.
    const removed = shared === undefined ? -1 : await bounded(shared.queue.remove(pending.x), 1000, -1);
    if (pending.settled) return;
    if (pending.attempt !== undefined) {
      pending.queued = true;
      return;
    }
    if (removed !== 1 && shared !== undefined) {
      const state = await bounded(shared.queue.getJobState(pending.x), 1000, "unreachable");
      if (state === "active" || state === "completed") {
        pending.queued = true;
        this.arm(pending, pending.timeout + this.settings.lostAfter, () =>
          this.lost(pending, "A worker took the job as its dispatch time ran out but gave no result in time"),
        );
        return;
      }
    }
    pending.settle(
      failure(
        SANDBOX_CODES.DISPATCH_TIMEOUT,
        `No worker took the job within ${this.settings.dispatchTimeout} ms (queue ${JSON.stringify(this.settings.address.queue)}); start workers or raise dispatchTimeout`,
      ),
    );
  }

  private lost(pending: Pending, why: string): void {
    const shared = this.shared;
    void shared?.then((s) => s.queue.remove(pending.x)).catch(() => undefined);
    pending.settle(failure(SANDBOX_CODES.DISPATCH_LOST, why));
  }

  private cancel(pending: Pending): void {
    if (pending.settled) return;
    pending.cancelled = true;
    pending.settle(failure(SANDBOX_CODES.CANCELLED, "Execution was cancelled"));
    void this.shared?.then(async (shared) => {
      // A waiting job is removed; an active one (locked) is cancelled through its worker's inbox.
      await shared.queue.remove(pending.x).catch(() => 0);
      if (pending.worker !== undefined)
        await this.tell(pending.worker, { t: "cancel", x: pending.x, reason: "cancelled by the caller" });
    });
    // If no worker announced itself yet, the cancel goes out on its first message (or the entry expires).
    if (pending.worker === undefined) setTimeout(() => this.forget(pending), this.settings.lostAfter).unref();
  }

  private forget(pending: Pending): void {
    if (this.pending.get(pending.x) === pending) this.pending.delete(pending.x);
    this.followers.delete(pending);
  }

  private tell(to: string, message: unknown): Promise<boolean> {
    return (this.shared as Promise<Shared>).then((s) => s.inbox.send(to, message)).catch(() => false);
  }

  /** A message from a worker. */
  private receive(raw: unknown): void {
    const message = raw as ToCaller;
    const pending = this.pending.get(message?.x);
    if (pending === undefined || message.t === "alive") return;
    if (message.a !== pending.attempt) {
      // A message of an attempt taken over since (its worker lost the job) is not for this execution any more.
      // (Should it be an old attempt's first word, arriving late, the poller still finds the result in Redis.)
      if (pending.attempts.has(message.a)) return;
      // The first message of an attempt, of whatever kind, says a worker took the job (again, after a crash).
      pending.attempts.add(message.a);
      pending.attempt = message.a;
      pending.worker = message.w;
      if (pending.cancelled) {
        void this.tell(message.w, { t: "cancel", x: pending.x, reason: "cancelled by the caller" });
        this.forget(pending);
        return;
      }
      if (pending.settled) return;
      this.arm(pending, pending.timeout + this.settings.lostAfter, () =>
        this.lost(
          pending,
          `The worker that took the job gave no result within timeout + lostAfter (${pending.timeout + this.settings.lostAfter} ms), and no other worker took it over`,
        ),
      );
    }
    if (message.t === "start" || pending.settled) return;
    if (message.t === "log") {
      if (message.s <= pending.logsDelivered) return;
      pending.logsDelivered = message.s;
      try {
        pending.onLog?.(message.entry);
      } catch {
        // A throwing onLog must not stop the run; the line is in the result's logs.
      }
    } else if (message.t === "call") {
      this.answer(pending, message);
    } else if (message.t === "done") {
      pending.settle(fromWire(message.result, this.resultCodec));
    }
  }

  /** Answer a guest's tool call: from the journal when a replay asks again, otherwise by calling the tool once. */
  private answer(pending: Pending, call: Extract<ToCaller, { t: "call" }>): void {
    const known = pending.journal.get(call.n);
    if (known !== undefined && (known.name !== call.name || known.input !== call.input)) {
      void this.tell(call.w, { t: "cancel", x: pending.x, reason: "the replay diverged" });
      pending.settle(
        failure(
          SANDBOX_CODES.REPLAY_DIVERGED,
          `The job was taken over by another worker and its guest made a different tool call #${call.n} (${call.name}, the first run called ${known.name} with other input); the caller cannot answer it from its journal without running a tool twice`,
        ),
      );
      return;
    }
    const entry = known ?? {
      name: call.name,
      input: call.input,
      reply: this.callTool(pending, call),
    };
    pending.journal.set(call.n, entry);
    void entry.reply.then((reply) =>
      this.tell(call.w, { t: "reply", x: pending.x, a: call.a, n: call.n, reply }),
    );
  }

  /** Run one tool call as a local engine would (sandbox-guest's `answerCall`); the id is stable across replays. */
  private callTool(pending: Pending, call: Extract<ToCaller, { t: "call" }>): Promise<CallReply> {
    const hostCalls = pending.hostCalls;
    if (hostCalls === undefined || !hostCalls.names.includes(call.name)) {
      const text = JSON.stringify({ name: "TypeError", message: `tools.${call.name} is not a tool` });
      return Promise.resolve({ id: call.n, ok: false, text });
    }
    const id = `${pending.x}#${call.n}`;
    return answerCall(
      { id: call.n, name: call.name, text: call.input },
      {
        names: hostCalls.names,
        call: (name, input) => hostCalls.call(name, input, id),
        ...(hostCalls.maxReplyBytes === undefined ? {} : { maxReplyBytes: hostCalls.maxReplyBytes }),
      },
    );
  }

  /**
   * Look every pending execution up in Redis: a lost job fails, a finished one
   * resolves (backstop for a lost message). The look-ups go out together, in
   * batches, so thousands pending cost a few round trips, not one each.
   */
  private async poll(shared: Shared): Promise<void> {
    const now = Date.now();
    const due = [...this.pending.values(), ...this.followers].filter((p) => !p.settled && p.queued);
    for (let from = 0; from < due.length; from += POLL_BATCH) {
      const batch = due.slice(from, from + POLL_BATCH);
      const states = await Promise.all(
        batch.map((pending) => shared.queue.getJobState(pending.x).catch(() => undefined)),
      );
      await Promise.all(batch.map((pending, i) => this.check(shared, pending, states[i], now)));
    }
  }

  /** What a pending execution's job state (`undefined`: Redis did not answer; asked again next round) means for it. */
  private async check(
    shared: Shared,
    pending: Pending,
    state: string | undefined,
    now: number,
  ): Promise<void> {
    if (state === undefined || pending.settled || !pending.queued) return;
    if (state === "unknown") {
      this.lost(
        pending,
        "The job is gone from Redis (restarted without persistence, evicted or deleted) before a worker finished it",
      );
    } else if (state === "completed") {
      const job = await shared.queue.getJob(pending.x).catch(() => undefined);
      if (job?.returnvalue != null) pending.settle(fromWire(job.returnvalue as WireResult, this.resultCodec));
    } else if (state === "failed") {
      const job = await shared.queue.getJob(pending.x).catch(() => undefined);
      this.lost(pending, `The workers failed the job: ${job?.failedReason ?? "no reason recorded"}`);
    } else if (pending.follower && now > pending.deadline) {
      this.lost(pending, "The execution with this id did not finish in time on another caller's submission");
    }
  }

  private connect(): Promise<Shared> {
    this.shared ??= (async () => {
      const { address, leaseMs, pollMs } = this.settings;
      const client = address.redis();
      const connections = connectionFamily(client);
      this.connections = connections;
      client.on("error", () => undefined); // reconnects on its own; a pending execution is bounded by its deadline
      try {
        const queue = new Queue(address.queue, { connection: client, prefix: address.prefix });
        queue.on("error", () => undefined);
        const inbox = await openInbox(this.settings.transport, {
          client,
          prefix: address.prefix,
          namespace: address.queue,
          leaseMs,
          receive: (message) => this.receive(message),
          onError: () => undefined,
        });
        let polling = false;
        const poller = setInterval(() => {
          if (polling || (this.pending.size === 0 && this.followers.size === 0)) return;
          polling = true;
          void this.poll(shared).finally(() => {
            polling = false;
          });
        }, pollMs);
        poller.unref();
        const shared: Shared = { client, connections, queue, inbox, poller };
        return shared;
      } catch (error) {
        connections.endAll();
        throw error;
      }
    })();
    this.shared.catch(() => {
      this.shared = undefined; // the next execute tries again
    });
    return this.shared;
  }

  /** Stop polling and close the queue, the inbox and every connection (the shell ended the runs first). */
  protected async dispose(): Promise<void> {
    // A Redis that never answered leaves `shared` pending: its client is closed all the same.
    const shared = this.shared === undefined ? undefined : await bounded(this.shared, 1000, undefined);
    if (shared === undefined) {
      this.connections?.endAll();
      return;
    }
    clearInterval(shared.poller);
    // Saying goodbye to an unreachable Redis would wait for ever: its commands fail at once instead.
    if (shared.client.status !== "ready") shared.connections.endAll();
    await settlesWithin(shared.inbox.close(), CLOSE_MARGIN_MS);
    await settlesWithin(shared.queue.close(), CLOSE_MARGIN_MS);
    shared.connections.endAll();
  }
}

/**
 * What the queue engine guarantees: what the remote engine guarantees (its
 * capabilities, as its package declares them), run on a worker process; a
 * remote engine registered elsewhere is assumed to guarantee nothing.
 */
export function queueCapabilities(
  remote: string,
  remoteCapabilities: EngineCapabilities | undefined,
): EngineCapabilities {
  const base: EngineCapabilities = remoteCapabilities ?? {
    securityBoundary: false,
    tier: `the "${remote}" engine, whose guarantees this caller does not know`,
    enforcesMemoryLimit: false,
    boundsAsyncWork: true,
    streamsLogs: true,
    abortsRunningCode: false,
    measuresCpu: false,
  };
  return Object.freeze({
    ...base,
    streamsLogs: true,
    tier: `on a queue worker process (through Redis, which holds the code, context and result in the clear): ${base.tier}`,
  });
}
