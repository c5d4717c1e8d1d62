/** Bounds of {@link createLogProgress}. */
export interface LogProgressLimits {
  /** Least time between two notifications, in ms; lines in between are sent together (100). */
  intervalMs?: number;
  /** Notifications per call at most; the last says the rest is in the result (50). */
  maxNotifications?: number;
  /** UTF-8 bytes of one notification's message at most (4 096). */
  maxMessageBytes?: number;
}

/** Log lines turned into progress notifications, bounded in count, rate and size. */
export interface LogProgress {
  /** A line the guest wrote. */
  line(text: string): void;
  /** Send what is waiting (before the result goes out) and stop: later lines are dropped. */
  finish(): Promise<void>;
}

/** What one notification carries: lines seen so far, and the new ones' text. */
export interface LogProgressUpdate {
  progress: number;
  message: string;
}

const encoder = new TextEncoder();

/**
 * Turn log lines into `send` calls: the first line goes at once, later ones at
 * most one call per `intervalMs` (lines in between joined by `\n`), each message
 * cut at `maxMessageBytes` with a note of what was cut, and no more than
 * `maxNotifications` calls. `send` failures are ignored (progress is advisory).
 */
export function createLogProgress(
  send: (update: LogProgressUpdate) => Promise<void>,
  limits: LogProgressLimits = {},
): LogProgress {
  const { intervalMs = 100, maxNotifications = 50, maxMessageBytes = 4096 } = limits;
  let seen = 0;
  let sent = 0;
  let lastAt = Number.NEGATIVE_INFINITY;
  let pending: string[] = [];
  let pendingBytes = 0;
  let dropped = 0;
  let timer: NodeJS.Timeout | undefined;
  let done = false;
  let inFlight: Promise<void> = Promise.resolve();

  const flush = (): void => {
    timer = undefined;
    if ((pending.length === 0 && dropped === 0) || sent >= maxNotifications) return;
    sent++;
    lastAt = Date.now();
    let message = cut(pending.join("\n"), maxMessageBytes);
    if (dropped > 0) message += `\n[${dropped} more line${dropped === 1 ? "" : "s"} cut]`;
    if (sent === maxNotifications) message += "\n[no further progress: every line is in the result's logs]";
    pending = [];
    pendingBytes = 0;
    dropped = 0;
    const update = { progress: seen, message };
    inFlight = inFlight.then(() => send(update)).catch(() => undefined);
  };

  return {
    line(text) {
      if (done || sent >= maxNotifications) return;
      seen++;
      if (pendingBytes >= maxMessageBytes) dropped++;
      else {
        pending.push(text);
        pendingBytes += text.length;
      }
      if (timer !== undefined) return;
      const wait = lastAt + intervalMs - Date.now();
      if (wait <= 0) flush();
      else timer = setTimeout(flush, wait);
    },
    async finish() {
      if (done) return inFlight;
      done = true;
      clearTimeout(timer);
      flush();
      return inFlight;
    },
  };
}

/** `text` cut to at most `maxBytes` UTF-8 bytes (never inside a character), saying how much was cut. */
function cut(text: string, maxBytes: number): string {
  if (text.length * 3 <= maxBytes) return text;
  const bytes = encoder.encode(text);
  if (bytes.length <= maxBytes) return text;
  const { read, written } = encoder.encodeInto(text, new Uint8Array(maxBytes));
  return `${text.slice(0, read)}[… ${bytes.length - written} more bytes cut]`;
}
