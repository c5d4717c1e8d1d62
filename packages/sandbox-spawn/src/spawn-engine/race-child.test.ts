import { getEventListeners } from "node:events";
import type { LogEntry } from "@suaveplan/sandbox-core/types";
import type { CallReply, GuestCall } from "@suaveplan/sandbox-guest";
import { describe, expect, it } from "vitest";
import { FakeChild, nextTurn } from "../../test/support/fake-child.js";
import { type ChildCalls, type RaceChildOptions, raceChild } from "./race-child.js";

// Fake children here: these races cannot be produced on demand by a real process.
const options = (extra: Partial<RaceChildOptions> = {}): RaceChildOptions => ({
  input: '{"code":"1 + 1"}',
  timeoutMs: 5_000,
  startTimeoutMs: 5_000,
  maxProtocolBytes: 1024 * 1024,
  maxStderrBytes: 64,
  ...extra,
});

const DONE = { type: "done", outcome: { kind: "value", text: "2" }, memoryUsed: 10 };

/** Calls answered by echoing their input, recording each one. */
function echoCalls(extra: Partial<ChildCalls> = {}): ChildCalls & { seen: GuestCall[] } {
  const seen: GuestCall[] = [];
  return {
    names: ["echo"],
    maxCallBytes: 64,
    answer: async (call) => {
      seen.push(call);
      return { id: call.id, ok: true, text: call.text };
    },
    seen,
    ...extra,
  };
}

/** The JSON lines written to the fake child's stdin after the request line. */
function replyLines(child: FakeChild): unknown[] {
  return child
    .input()
    .split("\n")
    .slice(1)
    .filter((line) => line !== "")
    .map((line) => JSON.parse(line) as unknown);
}

describe("raceChild", () => {
  it("writes the request to stdin and resolves ok on the done frame, killing the child if it lingers", async () => {
    const child = new FakeChild();
    const logs: LogEntry[] = [];
    const pending = raceChild(child, options({ onLog: (entry) => logs.push(entry), exitGraceMs: 20 }));
    child.send({ type: "start" });
    child.send({ type: "log", level: "warn", message: "careful" });
    child.send({ type: "log", level: "warn", message: "[output truncated at 7 bytes]" });
    child.send(DONE);
    expect(await pending).toStrictEqual({
      kind: "ok",
      outcome: { kind: "value", text: "2" },
      memoryUsed: 10,
      stderr: "",
    });
    expect(child.input()).toBe('{"code":"1 + 1"}');
    expect(logs).toStrictEqual([
      { level: "warn", message: "careful" },
      { level: "warn", message: "[output truncated at 7 bytes]" },
    ]);
    expect(child.kills).toEqual([]); // not on the caller's path
    await new Promise((resolve) => setTimeout(resolve, 60));
    expect(child.kills).toEqual(["SIGKILL"]);
  });

  it("does not kill a child that exits by itself within the grace after its done frame", async () => {
    const child = new FakeChild();
    const pending = raceChild(child, options({ exitGraceMs: 40 }));
    child.send(DONE);
    expect((await pending).kind).toBe("ok");
    await child.exit(0);
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect(child.kills).toEqual([]);
  });

  it("settles once: a done frame racing a timeout and a later close stays ok", async () => {
    const child = new FakeChild();
    const pending = raceChild(child, options({ timeoutMs: 20 }));
    child.send({ type: "start" });
    child.send(DONE);
    await new Promise((resolve) => setTimeout(resolve, 60));
    await child.exit(0);
    const outcome = await pending;
    expect(outcome.kind).toBe("ok");
    expect(child.kills).toEqual([]); // no timeout kill: the done frame won the race
  });

  it("settles once: an error event before close is a parse-error carrying the error", async () => {
    const child = new FakeChild();
    child.pid = undefined;
    const pending = raceChild(child, options());
    const error = Object.assign(new Error("spawn /missing/node ENOENT"), { code: "ENOENT" });
    child.emit("error", error);
    await child.exit(-2);
    expect(await pending).toEqual({
      kind: "parse-error",
      reason: "error event: spawn /missing/node ENOENT",
      error,
      exitCode: null,
      signal: null,
      stderr: "",
    });
    expect(child.kills).toEqual([]); // it exited: no kill
  });

  it("resolves no-output when the child closes without a done frame, with bounded stderr", async () => {
    const child = new FakeChild();
    const pending = raceChild(child, options({ maxStderrBytes: 8 }));
    child.send({ type: "start" });
    child.stderr.write("0123456789abcdef");
    await nextTurn();
    await child.exit(3);
    expect(await pending).toEqual({ kind: "no-output", exitCode: 3, signal: null, stderr: "01234567" });
  });

  it("resolves parse-error for a line that is not JSON, an unknown frame and malformed log, call or done frames", async () => {
    const cases: Array<[string, string]> = [
      ["forged result\n", "the runner wrote a line that is not JSON"],
      ["[1]\n", "the runner wrote a frame that is not an object"],
      ['{"type":"result","success":true,"result":2}\n', "the runner wrote an unknown frame"],
      ['{"type":"call","call":{"id":-1,"name":"x","text":"1"}}\n', "the runner wrote a malformed call frame"],
      ['{"type":"call","call":{"id":1,"name":"x"}}\n', "the runner wrote a malformed call frame"],
      ['{"type":"call","id":1,"name":"x","text":"1"}\n', "the runner wrote a malformed call frame"],
      ['{"type":"log","level":"loud","message":"x"}\n', "the runner wrote a malformed log frame"],
      ['{"type":"done","outcome":{"kind":"value","text":2}}\n', "the runner wrote a malformed done frame"],
      ['{"type":"done","outcome":{"kind":"forged"}}\n', "the runner wrote a malformed done frame"],
      [
        '{"type":"done","outcome":{"kind":"error","error":"boom"}}\n',
        "the runner wrote a malformed done frame",
      ],
      [
        '{"type":"done","outcome":{"kind":"timeout","timeoutMs":-1}}\n',
        "the runner wrote a malformed done frame",
      ],
      [
        '{"type":"done","outcome":{"kind":"value","text":"1"},"memoryUsed":"lots"}\n',
        "the runner wrote a malformed done frame",
      ],
      [
        '{"type":"done","outcome":{"kind":"value","text":"1"},"cpuMs":-0.5}\n',
        "the runner wrote a malformed done frame",
      ],
      [
        '{"type":"done","outcome":{"kind":"value","text":"1"},"cpuMs":"fast"}\n',
        "the runner wrote a malformed done frame",
      ],
      [
        '{"type":"done","outcome":{"kind":"value","text":"1"},"toolCalls":1.5}\n',
        "the runner wrote a malformed done frame",
      ],
      [
        '{"type":"done","outcome":{"kind":"value","text":"1"},"toolBytes":-2}\n',
        "the runner wrote a malformed done frame",
      ],
    ];
    for (const [line, reason] of cases) {
      const child = new FakeChild();
      const pending = raceChild(child, options());
      child.send(line);
      const outcome = await pending;
      expect({ line, reason: outcome.kind === "parse-error" && outcome.reason, killed: child.kills }).toEqual(
        {
          line,
          reason,
          killed: ["SIGKILL"],
        },
      );
    }
  });

  it("keeps only the well-typed fields of a done frame's error record", async () => {
    const child = new FakeChild();
    const pending = raceChild(child, options());
    child.send({
      type: "done",
      outcome: {
        kind: "error",
        error: {
          name: "TypeError",
          message: "boom",
          stack: "TypeError: boom",
          line: 1,
          column: "7",
          extra: "dropped",
        },
      },
    });
    expect(await pending).toStrictEqual({
      kind: "ok",
      outcome: {
        kind: "error",
        error: { name: "TypeError", message: "boom", stack: "TypeError: boom", line: 1 },
      },
      memoryUsed: undefined,
      stderr: "",
    });
  });

  it("resolves parse-error when the output ends in the middle of a frame", async () => {
    const child = new FakeChild();
    const pending = raceChild(child, options());
    child.send('{"type":"done","outc');
    await nextTurn();
    await child.exit(0);
    const outcome = await pending;
    expect(outcome.kind === "parse-error" && outcome.reason).toBe(
      "the runner's output ended in the middle of a frame",
    );
  });

  it("resolves parse-error when the protocol output exceeds its byte budget", async () => {
    const child = new FakeChild();
    const pending = raceChild(child, options({ maxProtocolBytes: 100 }));
    child.send({ type: "log", level: "log", message: "x".repeat(200) });
    const outcome = await pending;
    expect(outcome.kind === "parse-error" && outcome.reason).toBe(
      "the runner wrote more than 100 protocol bytes",
    );
  });

  it("times out in the start phase when no start frame arrives, and in the run phase after it", async () => {
    const idle = new FakeChild();
    expect(await raceChild(idle, options({ startTimeoutMs: 20 }))).toEqual({
      kind: "timeout",
      phase: "start",
      stderr: "",
    });
    expect(idle.kills).toEqual(["SIGKILL"]);
    const looping = new FakeChild();
    const pending = raceChild(looping, options({ timeoutMs: 20 }));
    looping.send({ type: "start" });
    expect(await pending).toEqual({ kind: "timeout", phase: "run", stderr: "" });
  });

  it("swallows a kill that throws after a timeout", async () => {
    const child = new FakeChild();
    child.killThrows = true;
    const outcome = await raceChild(child, options({ startTimeoutMs: 10 }));
    expect({ kind: outcome.kind, kills: child.kills }).toEqual({ kind: "timeout", kills: ["SIGKILL"] });
  });

  it("reports a child without a protocol pipe as a parse-error", async () => {
    const child = new FakeChild();
    Object.defineProperty(child, "stdio", { value: [child.stdin, null, child.stderr] });
    const outcome = await raceChild(child, options());
    expect(outcome.kind === "parse-error" && outcome.reason).toBe("the child has no protocol pipe on fd 3");
  });

  it("passes the done frame's CPU time and tool-call counts through", async () => {
    const child = new FakeChild();
    const pending = raceChild(child, options());
    child.send({ ...DONE, cpuMs: 1.25, toolCalls: 2, toolBytes: 40 });
    expect(await pending).toStrictEqual({
      kind: "ok",
      outcome: { kind: "value", text: "2" },
      memoryUsed: 10,
      cpuMs: 1.25,
      toolCalls: 2,
      toolBytes: 40,
      stderr: "",
    });
  });
});

describe("raceChild host calls", () => {
  it("answers each call frame with one reply line on stdin, keeping stdin open until the race ends", async () => {
    const child = new FakeChild();
    const calls = echoCalls();
    const pending = raceChild(child, options({ input: '{"code":"1"}\n', calls }));
    child.send({ type: "start" });
    child.send({ type: "call", call: { id: 1, name: "echo", text: '"a"' } });
    child.send({ type: "call", call: { id: 2, name: "echo", text: '"b"' } });
    await nextTurn();
    expect({ ended: child.stdin.writableEnded, replies: replyLines(child) }).toEqual({
      ended: false,
      replies: [
        { id: 1, ok: true, text: '"a"' },
        { id: 2, ok: true, text: '"b"' },
      ],
    });
    child.send(DONE);
    expect((await pending).kind).toBe("ok");
    expect({ ended: child.stdin.writableEnded, seen: calls.seen }).toEqual({
      ended: true,
      seen: [
        { id: 1, name: "echo", text: '"a"' },
        { id: 2, name: "echo", text: '"b"' },
      ],
    });
  });

  it("ends stdin right after the request when no tools are offered", async () => {
    const child = new FakeChild();
    const pending = raceChild(child, options());
    expect(child.stdin.writableEnded).toBe(true);
    child.send(DONE);
    await pending;
  });

  it("drops a reply that comes after the race ended, and never throws for a destroyed stdin", async () => {
    const answers: Array<(reply: CallReply) => void> = [];
    const calls = echoCalls({ answer: () => new Promise((resolve) => answers.push(resolve)) });
    const late = new FakeChild();
    const pending = raceChild(late, options({ input: "{}\n", calls }));
    late.send({ type: "call", call: { id: 1, name: "echo", text: "1" } });
    await nextTurn();
    late.send(DONE);
    await pending;
    answers[0]?.({ id: 1, ok: true, text: "1" });
    await nextTurn();
    expect(replyLines(late)).toEqual([]);

    const gone = new FakeChild();
    const running = raceChild(gone, options({ input: "{}\n", calls }));
    gone.send({ type: "call", call: { id: 1, name: "echo", text: "1" } });
    await nextTurn();
    gone.stdin.destroy();
    answers[1]?.({ id: 1, ok: true, text: "1" });
    await nextTurn();
    gone.send(DONE);
    expect((await running).kind).toBe("ok");
  });

  it("treats a call beyond the request's bounds as a broken protocol: killed, never answered", async () => {
    const cases: Array<[Partial<RaceChildOptions>, object, string]> = [
      [{}, { id: 1, name: "echo", text: "1" }, "the runner made a host call, but no tools were offered"],
      [
        { calls: echoCalls() },
        { id: 1, name: "exec", text: "1" },
        "the runner called a tool that was not offered",
      ],
      [
        { calls: echoCalls({ maxCallBytes: 8 }) },
        { id: 1, name: "echo", text: '"abc"' },
        "the runner sent a host call larger than 8 bytes",
      ],
    ];
    for (const [extra, call, reason] of cases) {
      const child = new FakeChild();
      const pending = raceChild(child, options(extra));
      child.send({ type: "call", call });
      const outcome = await pending;
      expect({
        reason: outcome.kind === "parse-error" && outcome.reason,
        killed: child.kills,
        answered: extra.calls === undefined ? [] : (extra.calls as ReturnType<typeof echoCalls>).seen,
      }).toEqual({ reason, killed: ["SIGKILL"], answered: [] });
    }
    const repeated = new FakeChild();
    const calls = echoCalls();
    const pending = raceChild(repeated, options({ calls }));
    repeated.send({ type: "call", call: { id: 7, name: "echo", text: "1" } });
    repeated.send({ type: "call", call: { id: 7, name: "echo", text: "2" } });
    const outcome = await pending;
    expect({ reason: outcome.kind === "parse-error" && outcome.reason, seen: calls.seen }).toEqual({
      reason: "the runner repeated a host call id",
      seen: [{ id: 7, name: "echo", text: "1" }],
    });
  });
});

describe("raceChild cancellation", () => {
  it("ends with cancelled and kills the child as soon as the signal aborts, then removes its listener", async () => {
    const child = new FakeChild();
    const controller = new AbortController();
    const pending = raceChild(child, options({ signal: controller.signal }));
    child.send({ type: "start" });
    child.stderr.write("busy");
    await nextTurn();
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(1);
    controller.abort();
    expect(await pending).toStrictEqual({ kind: "cancelled", stderr: "busy" });
    expect({ kills: child.kills, listeners: getEventListeners(controller.signal, "abort") }).toEqual({
      kills: ["SIGKILL"],
      listeners: [],
    });
  });

  it("sends nothing to a child when the signal is already aborted", async () => {
    const child = new FakeChild();
    const outcome = await raceChild(child, options({ signal: AbortSignal.abort() }));
    expect({ outcome, input: child.input(), kills: child.kills }).toStrictEqual({
      outcome: { kind: "cancelled", stderr: "" },
      input: "",
      kills: ["SIGKILL"],
    });
  });

  it("removes its abort listener when the child answers first", async () => {
    const child = new FakeChild();
    const controller = new AbortController();
    const pending = raceChild(child, options({ signal: controller.signal }));
    child.send(DONE);
    expect((await pending).kind).toBe("ok");
    controller.abort();
    expect({ listeners: getEventListeners(controller.signal, "abort"), kills: child.kills }).toEqual({
      listeners: [],
      kills: [],
    });
  });
});

describe("raceChild memory watch", () => {
  it("samples from the start frame on and ends with memory, killing the child, once growth passes the limit", async () => {
    const child = new FakeChild();
    const reads: number[] = [];
    let resident = 100;
    const pending = raceChild(
      child,
      options({
        memory: {
          limitBytes: 50,
          intervalMs: 1,
          read: (pid) => {
            reads.push(pid);
            resident += 20;
            return resident;
          },
        },
      }),
    );
    await nextTurn();
    expect(reads).toEqual([]); // nothing runs before the start frame
    child.send({ type: "start" });
    expect(await pending).toStrictEqual({ kind: "memory", grownBytes: 60, stderr: "" });
    expect({ reads, kills: child.kills }).toEqual({ reads: [4242, 4242, 4242, 4242], kills: ["SIGKILL"] });
  });

  it("ends the watch quietly when the child's memory can no longer be read", async () => {
    const child = new FakeChild();
    let reads = 0;
    const pending = raceChild(
      child,
      options({
        memory: {
          limitBytes: 50,
          intervalMs: 1,
          read: () => (++reads === 1 ? 100 : undefined),
        },
      }),
    );
    child.send({ type: "start" });
    await new Promise((resolve) => setTimeout(resolve, 20));
    child.send(DONE);
    expect({ outcome: (await pending).kind, reads }).toEqual({ outcome: "ok", reads: 2 });
  });

  it("ends with memory when the done frame's peak passed the limit between two samples", async () => {
    const peaked = async (peakBytes: number) => {
      const child = new FakeChild();
      const pending = raceChild(
        child,
        options({ memory: { limitBytes: 50, intervalMs: 60_000, read: () => 100 } }),
      );
      child.send({ type: "start" });
      child.send({ ...DONE, peakBytes });
      return { outcome: await pending, kills: child.kills };
    };
    expect(await peaked(51)).toStrictEqual({
      outcome: { kind: "memory", grownBytes: 51, stderr: "" },
      kills: ["SIGKILL"],
    });
    expect((await peaked(50)).outcome.kind).toBe("ok");
  });
});
