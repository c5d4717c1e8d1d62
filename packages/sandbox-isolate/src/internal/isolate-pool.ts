import type { IsolateFactory } from "../isolate-factory/isolate-factory.js";
import { IsolateSlot } from "./isolate-slot.js";

/**
 * The engine's isolates: each execution leases one (a warm idle one with its
 * heap limit when there is one), and gets it back healthy or not at all.
 * Up to `maxIdle` healthy isolates stay warm, each preparing a spare context.
 *
 * @internal
 */
export class IsolatePool {
  private idle: IsolateSlot[] = [];
  private readonly leased = new Set<IsolateSlot>();
  private closed = false;

  constructor(
    private readonly factory: IsolateFactory,
    private readonly maxIdle: number,
  ) {}

  /** Lease an isolate with this heap limit (MiB). Throws what {@link IsolateSlot.create} throws (isolated-vm unusable). */
  acquire(memoryLimitMiB: number): IsolateSlot {
    let slot: IsolateSlot | undefined;
    for (;;) {
      const index = this.idle.findIndex((candidate) => candidate.memoryLimitMiB === memoryLimitMiB);
      if (index === -1) break;
      [slot] = this.idle.splice(index, 1);
      if (slot?.healthy) break;
      slot?.dispose();
      slot = undefined;
    }
    slot ??= this.create(memoryLimitMiB);
    this.leased.add(slot);
    return slot;
  }

  /** Take a leased isolate back: kept warm when `reusable`, disposed otherwise. */
  release(slot: IsolateSlot, reusable: boolean): void {
    this.leased.delete(slot);
    if (this.closed || !reusable || !slot.healthy) {
      slot.dispose();
      return;
    }
    this.idle.push(slot);
    while (this.idle.length > this.maxIdle) this.idle.shift()?.dispose();
    if (this.idle.includes(slot)) slot.prepareSpare();
  }

  /** A healthy idle isolate, creating one with this heap limit (MiB) when none is warm. */
  warm(memoryLimitMiB: number): IsolateSlot {
    let slot = this.idle.find((candidate) => candidate.healthy);
    if (slot === undefined) {
      slot = this.create(memoryLimitMiB);
      this.idle.push(slot);
    }
    return slot;
  }

  /** Dispose the idle isolates (leased ones finish their execution first). */
  clearIdle(): void {
    for (const slot of this.idle.splice(0)) slot.dispose();
  }

  /** Dispose every isolate, leased ones too; later releases dispose theirs. Idempotent. */
  close(): void {
    this.closed = true;
    this.clearIdle();
    for (const slot of this.leased) slot.dispose();
    this.leased.clear();
  }

  private create(memoryLimitMiB: number): IsolateSlot {
    return IsolateSlot.create(this.factory, memoryLimitMiB);
  }
}
