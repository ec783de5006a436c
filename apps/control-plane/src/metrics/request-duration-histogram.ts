import type { Metric } from 'prom-client';

type Label = 'method' | 'route' | 'status_code';

/** One line of the exposition, as prom-client's metrics give them to their Registry. */
interface Sample {
  readonly labels: Readonly<Record<string, string | number>>;
  readonly value: number;
  readonly metricName: string;
}

interface Series {
  readonly labels: Readonly<Record<Label, string>>;
  /** Observations per bucket (not cumulative); the last one is +Inf. */
  readonly buckets: Float64Array;
  sum: number;
  count: number;
}

/**
 * `http_server_request_duration_seconds` (method, route, status_code), in prom-client's metric
 * shape so that a Registry exposes it like any other. Hand-written for the request path:
 * prom-client's Histogram checks and hashes the label set on every observation; this is three Map
 * lookups and one bucket increment (the route, the method and the status are keys whose hash is
 * kept: docs/benchmarks.md, "Cost of metrics and logs"). Its unit spec checks that it exposes the
 * very text prom-client's Histogram would.
 */
export class RequestDurationHistogram {
  readonly name = 'http_server_request_duration_seconds';
  readonly help = 'Duration of HTTP requests on the API port, from the request to the end of its response.';
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  /**
   * By route, method and status: bounded, as Node's parser knows a fixed set of methods and routes
   * are the app's. `all` keeps them in the order they came, which is prom-client's order.
   */
  private readonly byRoute = new Map<string, Map<string, Map<number, Series>>>();
  private readonly all: Series[] = [];

  constructor(private readonly upperBounds: readonly number[]) {}

  /** Registers it in prom-client's Registry, which takes any object of a metric's shape. */
  asMetric(): Metric {
    return this as unknown as Metric;
  }

  observe(method: string, route: string, status: number, seconds: number): void {
    let byMethod = this.byRoute.get(route);
    if (!byMethod) this.byRoute.set(route, (byMethod = new Map<string, Map<number, Series>>()));
    let byStatus = byMethod.get(method);
    if (!byStatus) byMethod.set(method, (byStatus = new Map<number, Series>()));
    let series = byStatus.get(status);
    if (!series) {
      const labels = { method, route, status_code: String(status) };
      series = { labels, buckets: new Float64Array(this.upperBounds.length + 1), sum: 0, count: 0 };
      byStatus.set(status, series);
      this.all.push(series);
    }
    let bucket = 0;
    while (bucket < this.upperBounds.length && seconds > this.upperBounds[bucket]) bucket++;
    series.buckets[bucket]++;
    series.sum += seconds;
    series.count++;
  }

  get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: Sample[] }> {
    const values: Sample[] = [];
    for (const { labels, buckets, sum, count } of this.all) {
      let cumulative = 0;
      this.upperBounds.forEach((le, i) => {
        cumulative += buckets[i];
        values.push({ labels: { le, ...labels }, value: cumulative, metricName: `${this.name}_bucket` });
      });
      values.push({ labels: { le: '+Inf', ...labels }, value: count, metricName: `${this.name}_bucket` });
      values.push({ labels, value: sum, metricName: `${this.name}_sum` });
      values.push({ labels, value: count, metricName: `${this.name}_count` });
    }
    return Promise.resolve({ name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values });
  }

  reset(): void {
    this.byRoute.clear();
    this.all.length = 0;
  }
}
