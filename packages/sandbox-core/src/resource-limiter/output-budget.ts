import type { LogEntry, LogLevel } from "../types/sandbox-types.js";

const encoder = new TextEncoder();

/** The line appended when output is cut: `[output truncated at N bytes]`. */
export function truncationSentinel(maxBytes: number): string {
  return `[output truncated at ${maxBytes} bytes]`;
}

/** UTF-8 byte length of `text`. */
export function byteLength(text: string): number {
  return encoder.encode(text).byteLength;
}

/**
 * Cut `text` to at most `maxBytes` UTF-8 bytes (never splitting a character)
 * and append the truncation sentinel; returns `text` unchanged when it fits.
 */
export function truncateOutput(text: string, maxBytes: number): string {
  // Every UTF-16 unit costs at least one byte, so only the first maxBytes + 1
  // units can matter: a 100 MB string is not encoded whole to keep 1 KiB of it.
  const head = text.length > maxBytes + 1 ? text.slice(0, maxBytes + 1) : text;
  const encoded = encoder.encode(head);
  if (head === text && encoded.byteLength <= maxBytes) return text;
  return `${sliceUtf8(encoded, maxBytes)}${truncationSentinel(maxBytes)}`;
}

function sliceUtf8(encoded: Uint8Array, maxBytes: number): string {
  let end = Math.max(0, maxBytes);
  // Step back over continuation bytes (10xxxxxx) so no character is split.
  while (end > 0 && end < encoded.byteLength && ((encoded[end] ?? 0) & 0xc0) === 0x80) end--;
  return new TextDecoder().decode(encoded.subarray(0, end));
}

/**
 * Collects console lines under a byte budget (an empty line counts as one
 * byte). Once `maxBytes` is reached the
 * last line is cut, a `warn` entry holding the sentinel is appended and every
 * later line is dropped (only counted), so a flood cannot grow host memory.
 */
export class LogCollector {
  /** Lines kept so far (the sentinel included once truncated). */
  readonly entries: LogEntry[] = [];
  private usedBytes = 0;
  private truncatedFlag = false;
  private droppedCount = 0;

  constructor(
    private readonly maxBytes: number,
    private readonly onLog?: (entry: LogEntry) => void,
  ) {}

  /** True once the budget was exceeded. */
  get truncated(): boolean {
    return this.truncatedFlag;
  }

  /** Lines dropped after truncation. */
  get dropped(): number {
    return this.droppedCount;
  }

  /** Record one line; returns false when it was dropped or cut. */
  push(level: LogLevel, message: string): boolean {
    if (this.truncatedFlag) {
      this.droppedCount++;
      return false;
    }
    // An empty line still costs one byte (its line break), so a flood of
    // `console.log()` calls is bounded like any other output.
    const size = Math.max(1, byteLength(message));
    if (this.usedBytes + size <= this.maxBytes) {
      this.usedBytes += size;
      this.emit({ level, message });
      return true;
    }
    const room = this.maxBytes - this.usedBytes;
    const head = sliceUtf8(encoder.encode(message), room);
    if (head.length > 0) this.emit({ level, message: head });
    this.usedBytes = this.maxBytes;
    this.truncatedFlag = true;
    this.emit({ level: "warn", message: truncationSentinel(this.maxBytes) });
    return false;
  }

  private emit(entry: LogEntry): void {
    this.entries.push(entry);
    this.onLog?.(entry);
  }
}
