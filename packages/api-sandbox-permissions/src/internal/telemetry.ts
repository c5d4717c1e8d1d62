// Every OpenTelemetry call of this package lives here.
import { type Counter, type MeterProvider, metrics } from "@opentelemetry/api";

/** Capabilities a denial is counted under. */
export type PermissionCapability = "fs" | "fetch" | "tool";

/** Name of the denial counter; attribute `capability` is `"fs"`, `"fetch"` or `"tool"`. */
export const PERMISSION_DENIED_METRIC = "plugin.permission_denied_total";

const METER_NAME = "@suaveplan/api-sandbox-permissions";
const counters = new WeakMap<MeterProvider, Counter>();

function counterFor(provider: MeterProvider): Counter {
  let counter = counters.get(provider);
  if (counter === undefined) {
    counter = provider.getMeter(METER_NAME).createCounter(PERMISSION_DENIED_METRIC, {
      description: "Capability calls refused by a PermissionChecker policy.",
      unit: "{denial}",
    });
    counters.set(provider, counter);
  }
  return counter;
}

/**
 * Count one denial. Uses `provider` when given, else the global meter provider as it is at the
 * time of the denial (so a provider registered after the checker was built is still used).
 */
export function recordDenial(capability: PermissionCapability, provider: MeterProvider | undefined): void {
  counterFor(provider ?? metrics.getMeterProvider()).add(1, { capability });
}
