// The bundle entry of the `v8` profile (see tsup.config.ts): the script a realm evaluates.
import { createKernel } from "../create-kernel.js";
import { V8_PARTS } from "./v8.js";

export const kernel = createKernel(V8_PARTS);
