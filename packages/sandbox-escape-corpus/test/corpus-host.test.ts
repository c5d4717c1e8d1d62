import { existsSync, writeFileSync } from "node:fs";
import { runInNewContext } from "node:vm";
import { afterEach, describe, expect, it } from "vitest";
import {
  type CorpusHost,
  createCorpusHost,
  ESCAPE_TECHNIQUES,
  engineProgram,
  REACHED_MARKER,
  SECRET_NAME,
} from "../src/index.js";

// The corpus is only worth its green cells if the host notices an escape. These tests run the
// corpus's own snippets where they DO escape (a bare node:vm context made from a host object)
// and check that each tell-tale is seen.

let host: CorpusHost | undefined;
afterEach(() => {
  host?.dispose();
  host = undefined;
});

const technique = (name: string) => {
  const found = ESCAPE_TECHNIQUES.find((entry) => entry.name === name);
  if (found === undefined) throw new Error(`no technique ${name}`);
  return found;
};

/** A deliberately weak runner: a vm context whose global object is a host-realm object. */
async function runUnsafely(code: string): Promise<unknown> {
  return runInNewContext(`(async () => {\n${code}\n})()`, { console });
}

describe("the corpus host sees an escape", () => {
  it("global-this-constructor-chain escapes a bare vm context: the secret, the canary and the reach are all seen", async () => {
    expect.assertions(4);
    host = createCorpusHost();
    const result = await runUnsafely(engineProgram(host, technique("global-this-constructor-chain")));
    expect(result).toBe(`${REACHED_MARKER}:env=${host.secret}:wrote`);
    expect(existsSync(host.canaryPath)).toBe(true);
    expect(host.judge([{ result }])).toEqual({ escaped: true, hostPolluted: [], reachedProcess: true });
    // The canary alone is enough, whatever the guest reports.
    expect(host.judge(["nothing to see"]).escaped).toBe(true);
  });

  it("host-value-constructor-chain through a host-realm value handed to a bare context", async () => {
    expect.assertions(1);
    host = createCorpusHost();
    const result = await runInNewContext(
      `(async () => {\n${engineProgram(host, technique("host-value-constructor-chain"))}\n})()`,
      Object.assign(Object.create(null), { console: {} }),
    );
    expect(JSON.stringify(result)).toContain(`${REACHED_MARKER}:env=${host.secret}`);
  });

  it("a snippet that reaches a process without the secret (a sanitised env) is still a reach", () => {
    expect.assertions(1);
    host = createCorpusHost();
    expect(host.judge([`${REACHED_MARKER}:env=undefined`])).toEqual({
      escaped: false,
      hostPolluted: [],
      reachedProcess: true,
    });
  });

  it("host prototype pollution is seen, and so is a file dropped next to the canary", () => {
    expect.assertions(2);
    host = createCorpusHost();
    Object.defineProperty(Object.prototype, "pollutedByTest", { value: 1, configurable: true });
    try {
      expect(host.judge([]).hostPolluted).toEqual(["Object.prototype.pollutedByTest"]);
    } finally {
      delete (Object.prototype as Record<string, unknown>).pollutedByTest;
    }
    writeFileSync(`${host.canaryPath}.other`, "x");
    expect(host.judge([]).escaped).toBe(true);
  });

  it("the secret is set for the run and restored after", () => {
    expect.assertions(3);
    const before = process.env[SECRET_NAME];
    host = createCorpusHost();
    expect(process.env[SECRET_NAME]).toBe(host.secret);
    expect(host.secret).toMatch(/^sk-escape-[0-9a-f-]{36}$/);
    host.dispose();
    host = undefined;
    expect(process.env[SECRET_NAME]).toBe(before);
  });
});

describe("the corpus itself", () => {
  it("has at least 40 distinct techniques, each named in kebab-case and citing a source", () => {
    expect.assertions(3);
    const names = ESCAPE_TECHNIQUES.map((entry) => entry.name);
    expect(new Set(names).size).toBe(names.length);
    expect(names.filter((name) => !/^[a-z0-9]+(-[a-z0-9]+)*$/.test(name))).toEqual([]);
    expect(ESCAPE_TECHNIQUES.filter((entry) => entry.source.length < 20).map((entry) => entry.name)).toEqual(
      [],
    );
  });

  it("counts its techniques by kind", () => {
    expect.assertions(1);
    const count = (kind: string) => ESCAPE_TECHNIQUES.filter((entry) => entry.kind === kind).length;
    expect({ escape: count("escape"), dos: count("dos"), persist: count("persist") }).toEqual({
      escape: 45,
      dos: 15,
      persist: 3,
    });
  });
});
