import { MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";

/** A pull reader: nothing is exported until the test calls `collect()`. */
class TestReader extends MetricReader {
  protected override async onShutdown(): Promise<void> {}
  protected override async onForceFlush(): Promise<void> {}
}

/** A real SDK meter provider with an in-memory reader, and a reader of one counter's points by attribute. */
export function createTestMetrics(): {
  meterProvider: MeterProvider;
  /** Current cumulative value of counter `name`, keyed by the value of `attribute`. */
  read(name: string, attribute: string): Promise<Record<string, number>>;
  shutdown(): Promise<void>;
} {
  const reader = new TestReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  return {
    meterProvider,
    async read(name, attribute) {
      const { resourceMetrics } = await reader.collect();
      const out: Record<string, number> = {};
      for (const scope of resourceMetrics.scopeMetrics) {
        for (const metric of scope.metrics) {
          if (metric.descriptor.name !== name) continue;
          for (const point of metric.dataPoints) {
            out[String(point.attributes[attribute])] = point.value as number;
          }
        }
      }
      return out;
    },
    shutdown: () => meterProvider.shutdown(),
  };
}
