import type { ParityRow } from "./parity-table.js";

/** Parity rows for url (see {@link ParityRow}); spread into PARITY_ROWS. */
export const PARITY_URL_ROWS: readonly ParityRow[] = [];
