#!/usr/bin/env node
// Quick start: set everything up, then run the CLI on the example snippet
// under every engine.
import { run, setup } from "./setup.mjs";

const { pnpm, env } = setup();
run([...pnpm, "run", "demo"], env);
