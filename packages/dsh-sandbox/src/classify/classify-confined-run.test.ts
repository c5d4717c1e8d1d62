import { describe, expect, it } from "vitest";
import { type ConfinedRunDialect, classifyConfinedRun } from "./classify-confined-run.js";

const dialect: ConfinedRunDialect = {
  denialSignatures: ["Read-only file system"],
  runnerFailureRules: [
    {
      allowedExitCodes: [1],
      fatalSignatures: ["bwrap: Creating new namespace failed"],
      informationalLines: ["bwrap: Creating new namespace failed: this line is only a notice"],
    },
  ],
};

describe("classifyConfinedRun", () => {
  it("exit 0 is ok even when stderr carries a fatal signature or a denial", () => {
    const stderr =
      "bwrap: Creating new namespace failed: x\nsh: cannot create /etc/x: Read-only file system\n";
    expect(classifyConfinedRun({ exitCode: 0, stderr }, dialect)).toEqual({ outcome: "ok" });
  });

  it("runner failure: a fatal signature on one line with an allowed exit code", () => {
    const stderr = "warming up\nbwrap: Creating new namespace failed: Operation not permitted\n";
    expect(classifyConfinedRun({ exitCode: 1, stderr }, dialect)).toEqual({
      outcome: "runner-failure",
      detail: "bwrap: Creating new namespace failed: Operation not permitted",
    });
  });

  it("runner failure: the fatal signature matches case-insensitively as a substring", () => {
    const stderr = "prefix BWRAP: CREATING NEW NAMESPACE FAILED suffix";
    expect(classifyConfinedRun({ exitCode: 1, stderr }, dialect)).toEqual({
      outcome: "runner-failure",
      detail: "prefix BWRAP: CREATING NEW NAMESPACE FAILED suffix",
    });
  });

  it("runner failure: the exit-code gate rejects an exit code outside allowedExitCodes", () => {
    const stderr = "bwrap: Creating new namespace failed: Operation not permitted";
    expect(classifyConfinedRun({ exitCode: 2, stderr }, dialect)).toEqual({ outcome: "failed" });
  });

  it("runner failure: a signal death (exitCode null) never passes an exit-code gate", () => {
    const stderr = "bwrap: Creating new namespace failed: Operation not permitted";
    expect(classifyConfinedRun({ exitCode: null, stderr }, dialect)).toEqual({ outcome: "failed" });
  });

  it("runner failure: without a gate any non-zero exit (or a signal) may match", () => {
    const ungated: ConfinedRunDialect = {
      denialSignatures: [],
      runnerFailureRules: [{ fatalSignatures: ["runner exploded"] }],
    };
    expect(classifyConfinedRun({ exitCode: 77, stderr: "runner exploded" }, ungated)).toEqual({
      outcome: "runner-failure",
      detail: "runner exploded",
    });
    expect(classifyConfinedRun({ exitCode: null, stderr: "runner exploded" }, ungated)).toEqual({
      outcome: "runner-failure",
      detail: "runner exploded",
    });
  });

  it("runner failure: informational lines are removed by case-insensitive exact full-line equality", () => {
    const stderr = "BWRAP: creating new namespace failed: THIS LINE IS ONLY A NOTICE\n";
    expect(classifyConfinedRun({ exitCode: 1, stderr }, dialect)).toEqual({ outcome: "failed" });
  });

  it("runner failure: an informational entry does not remove a line it only partly equals", () => {
    const stderr = "bwrap: Creating new namespace failed: this line is only a notice (and more)";
    expect(classifyConfinedRun({ exitCode: 1, stderr }, dialect)).toEqual({
      outcome: "runner-failure",
      detail: "bwrap: Creating new namespace failed: this line is only a notice (and more)",
    });
  });

  it("runner failure: informational removal is per line, a real fatal line elsewhere still matches", () => {
    const stderr =
      "bwrap: Creating new namespace failed: this line is only a notice\r\nbwrap: Creating new namespace failed: EPERM\r\n";
    expect(classifyConfinedRun({ exitCode: 1, stderr }, dialect)).toEqual({
      outcome: "runner-failure",
      detail: "bwrap: Creating new namespace failed: EPERM",
    });
  });

  it("runner failure: exit status alone never proves it", () => {
    expect(classifyConfinedRun({ exitCode: 1, stderr: "" }, dialect)).toEqual({ outcome: "failed" });
    expect(classifyConfinedRun({ exitCode: 1, stderr: "something else broke" }, dialect)).toEqual({
      outcome: "failed",
    });
  });

  it("runner failure: a signature split across two lines does not match", () => {
    const stderr = "bwrap: Creating new\nnamespace failed";
    expect(classifyConfinedRun({ exitCode: 1, stderr }, dialect)).toEqual({ outcome: "failed" });
  });

  it("runner failure: empty fatal signatures are ignored instead of matching every line", () => {
    const empty: ConfinedRunDialect = {
      denialSignatures: [""],
      runnerFailureRules: [{ fatalSignatures: [""] }],
    };
    expect(classifyConfinedRun({ exitCode: 1, stderr: "anything" }, empty)).toEqual({ outcome: "failed" });
  });

  it("runner failure is checked before denial", () => {
    const stderr =
      "sh: cannot create /etc/x: Read-only file system\nbwrap: Creating new namespace failed: Operation not permitted";
    expect(classifyConfinedRun({ exitCode: 1, stderr }, dialect)).toEqual({
      outcome: "runner-failure",
      detail: "bwrap: Creating new namespace failed: Operation not permitted",
    });
  });

  it("rules are tried in order and the first matching rule's line is the detail", () => {
    const twoRules: ConfinedRunDialect = {
      denialSignatures: [],
      runnerFailureRules: [
        { allowedExitCodes: [9], fatalSignatures: ["alpha"] },
        { fatalSignatures: ["beta"] },
      ],
    };
    expect(classifyConfinedRun({ exitCode: 1, stderr: "alpha\nbeta" }, twoRules)).toEqual({
      outcome: "runner-failure",
      detail: "beta",
    });
  });

  it("denial: the backend's own signature, case-insensitive, returns the line verbatim", () => {
    const stderr = "first\nsh: 1: cannot create /etc/x: read-only FILE system\n";
    expect(classifyConfinedRun({ exitCode: 2, stderr }, dialect)).toEqual({
      outcome: "denied",
      detail: "sh: 1: cannot create /etc/x: read-only FILE system",
    });
  });

  it("denial: another backend's dialect is not claimed", () => {
    const stderr = "touch: cannot touch '/etc/x': Permission denied";
    expect(classifyConfinedRun({ exitCode: 1, stderr }, dialect)).toEqual({ outcome: "failed" });
  });

  it("failed: non-zero exit without runner or denial evidence", () => {
    expect(classifyConfinedRun({ exitCode: 3, stderr: "boom" }, dialect)).toEqual({ outcome: "failed" });
  });

  it("never rewrites the stderr it was given", () => {
    const run = { exitCode: 1, stderr: "bwrap: Creating new namespace failed: X\r\n" };
    classifyConfinedRun(run, dialect);
    expect(run).toEqual({ exitCode: 1, stderr: "bwrap: Creating new namespace failed: X\r\n" });
  });
});

describe("classifyConfinedRun on odd stderr", () => {
  it("CRLF line endings: informational lines still equal exactly, details carry no \\r", () => {
    const notice = "bwrap: Creating new namespace failed: this line is only a notice";
    expect(classifyConfinedRun({ exitCode: 1, stderr: `${notice}\r\nother\r\n` }, dialect)).toEqual({
      outcome: "failed",
    });
    expect(
      classifyConfinedRun({ exitCode: 1, stderr: "x\r\nbash: /etc/x: Read-only file system\r\n" }, dialect),
    ).toEqual({ outcome: "denied", detail: "bash: /etc/x: Read-only file system" });
  });

  it("a lone carriage return (progress output) ends a line too", () => {
    expect(
      classifyConfinedRun(
        { exitCode: 1, stderr: "fetch 10%\rfetch 90%\rbash: /etc/x: Read-only file system\n" },
        dialect,
      ),
    ).toEqual({ outcome: "denied", detail: "bash: /etc/x: Read-only file system" });
    const notice = "bwrap: Creating new namespace failed: this line is only a notice";
    expect(classifyConfinedRun({ exitCode: 1, stderr: `${notice}\rdone` }, dialect)).toEqual({
      outcome: "failed",
    });
  });

  it("a signature inside a longer line matches and the whole line is the detail", () => {
    const line = "cp: cannot create regular file '/usr/x': Read-only file system (os error 30)";
    expect(classifyConfinedRun({ exitCode: 1, stderr: `a\n${line}\nb` }, dialect)).toEqual({
      outcome: "denied",
      detail: line,
    });
  });

  it("signatures are literal text, not patterns", () => {
    const literal: ConfinedRunDialect = { denialSignatures: ["denied (.*)"], runnerFailureRules: [] };
    expect(classifyConfinedRun({ exitCode: 1, stderr: "denied (x)\n" }, literal)).toEqual({
      outcome: "failed",
    });
    expect(classifyConfinedRun({ exitCode: 1, stderr: "DENIED (.*) here\n" }, literal)).toEqual({
      outcome: "denied",
      detail: "DENIED (.*) here",
    });
  });

  it("a connection the cut network refused is denied with reason network, only under network deny", () => {
    const lines = [
      "curl: (7) Failed to connect to 127.0.0.1 port 8080 after 0 ms: Couldn't connect to server",
      "curl: (6) Could not resolve host: example.com",
      "Error: connect EACCES 127.0.0.1:8080 - Local (undefined:undefined)",
      "Error: connect ENETUNREACH 10.0.0.1:80",
      "wget: unable to connect: Network is unreachable",
    ];
    const classify = (network: ConfinedRunDialect["network"]) =>
      lines.map((line) =>
        classifyConfinedRun(
          { exitCode: 7, stderr: `x\n${line}\n` },
          network === undefined ? dialect : { ...dialect, network },
        ),
      );
    expect(classify("deny")).toEqual(
      lines.map((detail) => ({ outcome: "denied", detail, reason: "network" })),
    );
    // With the network allowed (or no claim), the same text is an ordinary failure.
    expect([...classify("allow"), ...classify(undefined)]).toEqual(
      Array.from({ length: 10 }, () => ({ outcome: "failed" })),
    );
    // A file denial wins (it is the backend's own dialect); other failures stay failures.
    const both = "sh: /etc/x: Read-only file system\ncurl: (7) Failed to connect\n";
    expect([
      classifyConfinedRun({ exitCode: 1, stderr: both }, { ...dialect, network: "deny" }),
      classifyConfinedRun(
        { exitCode: 22, stderr: "curl: (22) The requested URL returned error: 404\nEACCES\n" },
        { ...dialect, network: "deny" },
      ),
    ]).toEqual([{ outcome: "denied", detail: "sh: /etc/x: Read-only file system" }, { outcome: "failed" }]);
  });

  it("a huge stderr is classified in linear time without a copy per line", () => {
    const notice = "bwrap: Creating new namespace failed: this line is only a notice";
    const many = `${"abc\n".repeat(10_000_000)}${`${notice}\n`.repeat(100_000)}bash: /etc/x: Read-only file system\n`;
    const started = performance.now();
    const result = classifyConfinedRun({ exitCode: 1, stderr: many }, dialect);
    expect(result).toEqual({ outcome: "denied", detail: "bash: /etc/x: Read-only file system" });
    const oneLine = `${"a".repeat(50_000_000)} Read-only file system`;
    expect(classifyConfinedRun({ exitCode: 1, stderr: oneLine }, dialect).outcome).toBe("denied");
    expect(performance.now() - started).toBeLessThan(3_000);
  });
});
