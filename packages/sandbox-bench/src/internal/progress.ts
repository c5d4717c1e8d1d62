/**
 * A progress line per finished bench row, with the time spent and a rough
 * estimate of the time left (the mean row so far times the rows to go):
 * `  [3/11] vm W1 — 14 s elapsed, about 37 s left`.
 */
export function createProgress(
  total: number,
  write: (line: string) => void,
  now: () => number = () => performance.now(),
): (label: string) => void {
  const started = now();
  let done = 0;
  return (label) => {
    done++;
    const elapsedMs = now() - started;
    const leftMs = done < total ? (elapsedMs / done) * (total - done) : 0;
    const eta = done < total ? `, about ${seconds(leftMs)} left` : "";
    write(`  [${done}/${total}] ${label} — ${seconds(elapsedMs)} elapsed${eta}\n`);
  };
}

function seconds(ms: number): string {
  return `${Math.round(ms / 1000)} s`;
}
