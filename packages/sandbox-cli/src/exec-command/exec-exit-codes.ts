/**
 * Exit codes of `suaveplan-sandbox exec`. The command's own exit code passes
 * through unchanged; the CLI's own outcomes use the codes `timeout(1)`,
 * `env(1)` and `nohup(1)` use, which a command is unlikely to produce itself.
 */
export const EXEC_EXIT_CODES = Object.freeze({
  /** `--timeout` expired; the confined tree was killed (as `timeout(1)`). */
  timeout: 124,
  /** Bad command line or settings file: nothing ran (as `timeout(1)`'s own failure). */
  usage: 125,
  /** The sandbox could not run the command: no usable backend, or the runner failed before it (as `env(1)`'s 126). */
  sandboxFailure: 126,
  /** SIGINT reached the CLI; the confined tree was killed. */
  interrupted: 130,
  /** The CLI's output went to a closed pipe; the confined tree was killed. */
  brokenPipe: 141,
  /** SIGTERM reached the CLI; the confined tree was killed. */
  terminated: 143,
});
