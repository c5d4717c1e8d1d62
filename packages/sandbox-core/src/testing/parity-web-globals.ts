import type { ParityRow } from "./parity-table.js";

/** Parity rows for web-globals (see {@link ParityRow}); spread into PARITY_ROWS. */
export const PARITY_WEB_GLOBALS_ROWS: readonly ParityRow[] = [];
