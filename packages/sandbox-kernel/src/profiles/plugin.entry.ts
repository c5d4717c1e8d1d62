// The bundle entry of the `plugin` profile (see tsup.config.ts): the script the plugin host's
// context evaluates.
import { createKernel } from "../create-kernel.js";
import { PLUGIN_PARTS } from "./plugin.js";

export const kernel = createKernel(PLUGIN_PARTS);
