/** The CLI's version (kept in a module of its own so `--version` loads nothing else). */
export const VERSION = "0.1.0";
