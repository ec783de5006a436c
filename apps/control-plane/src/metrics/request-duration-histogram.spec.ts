import { Histogram, Registry } from 'prom-client';
import { RequestDurationHistogram } from './request-duration-histogram';

const BUCKETS = [0.001, 0.01, 0.1, 1];

describe('RequestDurationHistogram', () => {
  it('exposes exactly what prom-client’s Histogram exposes for the same observations', async () => {
    const ours = new RequestDurationHistogram(BUCKETS);
    const theirs = new Histogram({
      name: ours.name,
      help: ours.help,
      labelNames: ['method', 'route', 'status_code'],
      buckets: BUCKETS,
      registers: [],
    });
    const observations: [string, string, number, number][] = [
      ['GET', '/v1/pricing', 200, 0.0004],
      ['GET', '/v1/pricing', 200, 0.001], // on a bound: in that bucket
      ['GET', '/v1/pricing', 304, 0.05],
      ['POST', '/v1/volumes', 201, 0.2],
      ['GET', '/v1/pricing', 200, 7], // above every bound: +Inf only
      ['GET', 'unmatched', 404, 0.003],
      ['HEAD', '/v1/pricing', 200, 0.002], // a route seen before, a new series: exposed last, as prom-client does
      ['GET', '/v1/pricing', 200, 0.0099],
    ];
    for (const [method, route, status, seconds] of observations) {
      ours.observe(method, route, status, seconds);
      theirs.labels(method, route, String(status)).observe(seconds);
    }
    const registryOf = (metric: Parameters<Registry['registerMetric']>[0]) => {
      const registry = new Registry();
      registry.registerMetric(metric);
      return registry.metrics();
    };
    const text = await registryOf(ours.asMetric());
    expect(text).toBe(await registryOf(theirs));
    expect(text).toContain(
      'http_server_request_duration_seconds_bucket{le="0.01",method="GET",route="/v1/pricing",status_code="200"} 3',
    );
    expect(text).toContain(
      'http_server_request_duration_seconds_count{method="GET",route="/v1/pricing",status_code="200"} 4',
    );
  });

  it('forgets everything on reset', async () => {
    const ours = new RequestDurationHistogram(BUCKETS);
    ours.observe('GET', '/', 200, 0.1);
    ours.reset();
    expect((await ours.get()).values).toEqual([]);
  });
});
