import type { ParityRow } from "./parity-table.js";

/** Parity rows for completion (see {@link ParityRow}); spread into PARITY_ROWS. */
export const PARITY_COMPLETION_ROWS: readonly ParityRow[] = [];
