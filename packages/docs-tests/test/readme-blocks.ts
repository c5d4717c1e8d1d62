import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

/** Languages a reader can paste and run: JavaScript, TypeScript (types stripped), POSIX shell. */
export type BlockLanguage = "js" | "ts" | "sh";

/** How a README asks for a block to be run, from HTML comments right before it. */
export interface BlockMarkers {
  /** `<!-- not-run: reason -->`: the block is not executed; the reason says why. */
  notRun?: string;
  /** `<!-- node-flags: --flag … -->`: extra Node flags for a js/ts block. */
  nodeFlags?: string[];
  /** `<!-- exit-code: N -->`: the exit status the block ends with (default 0). */
  exitCode?: number;
}

/** One fenced code block of a README that the docs test considers. */
export interface ReadmeBlock extends BlockMarkers {
  /** README path relative to the repository root. */
  readme: string;
  /** 1-based line of the opening fence. */
  line: number;
  language: BlockLanguage;
  code: string;
  /** Text of a ```text block right after this one that a `<!-- prints -->` comment introduces. */
  prints?: string;
}

const LANGUAGES: Readonly<Record<string, BlockLanguage>> = {
  js: "js",
  javascript: "js",
  mjs: "js",
  ts: "ts",
  typescript: "ts",
  sh: "sh",
  bash: "sh",
  shell: "sh",
};

/** Parse the HTML-comment markers in `comments` (the lines between the previous block and this one). */
export function parseMarkers(comments: readonly string[]): BlockMarkers {
  const markers: BlockMarkers = {};
  for (const line of comments) {
    const m = /^<!--\s*(not-run|node-flags|exit-code|prints)\s*(?::\s*(.*?))?\s*-->$/.exec(line.trim());
    if (m === null) continue;
    const [, key, value = ""] = m;
    if (key === "not-run") markers.notRun = value;
    else if (key === "node-flags") markers.nodeFlags = value.split(/\s+/).filter(Boolean);
    else if (key === "exit-code") markers.exitCode = Number(value);
  }
  return markers;
}

/** Every js/ts/sh block of one README's text, with its markers and expected output. */
export function extractBlocks(readme: string, text: string): ReadmeBlock[] {
  const lines = text.split("\n");
  const blocks: ReadmeBlock[] = [];
  let pending: string[] = [];
  let last: ReadmeBlock | undefined;
  let lastEnd = -1;
  for (let i = 0; i < lines.length; i++) {
    const fence = /^```(\S*)\s*$/.exec(lines[i] as string);
    if (fence === null) {
      if ((lines[i] as string).trim() !== "") pending.push(lines[i] as string);
      continue;
    }
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i] as string); i++) body.push(lines[i] as string);
    const info = fence[1] ?? "";
    const language = LANGUAGES[info];
    const printsHere = pending.some((l) => /^<!--\s*prints\s*-->$/.test(l.trim()));
    if (info === "text" && printsHere && last !== undefined && pending.length === 1 && lastEnd >= 0) {
      last.prints = body.join("\n");
    } else if (language !== undefined) {
      last = { readme, line: start + 1, language, code: body.join("\n"), ...parseMarkers(pending) };
      blocks.push(last);
    } else {
      last = undefined;
    }
    lastEnd = i;
    pending = [];
  }
  return blocks;
}

/** The root README, every package README and every page directly under `docs/`, relative to `root`. */
export function readmePaths(root: string): string[] {
  const packages = readdirSync(join(root, "packages"))
    .sort()
    .map((dir) => `packages/${dir}/README.md`)
    .filter((path) => {
      try {
        readFileSync(join(root, path));
        return true;
      } catch {
        return false;
      }
    });
  const docs = readdirSync(join(root, "docs"), { withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(".md"))
    .map((entry) => `docs/${entry.name}`)
    .sort();
  return ["README.md", ...packages, ...docs];
}
