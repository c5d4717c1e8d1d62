/** Process exit codes of `suaveplan-sandbox`. */
export const EXIT_CODES = Object.freeze({
  /** The code ran and succeeded. */
  ok: 0,
  /** The code ran and failed (threw, was blocked, was denied). */
  failed: 1,
  /** Bad command line or input. */
  usage: 2,
  /** The code hit the timeout or the memory limit. */
  limit: 3,
});

/** One of {@link EXIT_CODES}. */
export type ExitCode = (typeof EXIT_CODES)[keyof typeof EXIT_CODES];
