import { MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";
import type { DenialMetrics } from "../../src/testing/conformance-env.js";

class PullReader extends MetricReader {
  protected override async onShutdown(): Promise<void> {}
  protected override async onForceFlush(): Promise<void> {}
}

/** `plugin.permission_denied_total` read through a real SDK MeterProvider with an in-memory pull reader. */
export function createSdkDenialMetrics(): DenialMetrics {
  const reader = new PullReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  return {
    meterProvider,
    async read() {
      const { resourceMetrics } = await reader.collect();
      const out: Record<string, number> = {};
      for (const scope of resourceMetrics.scopeMetrics) {
        for (const metric of scope.metrics) {
          if (metric.descriptor.name !== "plugin.permission_denied_total") continue;
          for (const point of metric.dataPoints)
            out[String(point.attributes.capability)] = point.value as number;
        }
      }
      return out;
    },
  };
}
