import { ConfigurationError, loadConfig } from './app-config';

function problemsOf(env: Record<string, string>): readonly string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigurationError) return error.problems;
    throw error;
  }
  return [];
}

describe('loadConfig', () => {
  it('has the documented defaults', () => {
    expect({ ...loadConfig({}) }).toEqual({
      databaseUrl: undefined,
      dataDir: '.data',
      port: 3000,
      host: '0.0.0.0',
      apiTokens: [],
      pricingRateLimit: 120,
      pricingRateWindowS: 60,
      pricingMaxStalenessS: 600,
      trustProxy: false,
      redisUrl: undefined,
      databaseTimeoutS: 5,
      shutdownTimeoutS: 10,
      logLevel: 'info',
      logFormat: 'json',
      metricsPort: 9464,
    });
  });

  it('reads every variable', () => {
    const config = loadConfig({
      DATABASE_URL: 'postgres://u:p@db:5432/pricing',
      DATA_DIR: '/var/lib/pricing',
      PORT: '8080',
      HOST: '127.0.0.1',
      API_TOKENS: 'token-aaaaaaaaaaaaaaaa,token-bbbbbbbbbbbbbbbb',
      PRICING_RATE_LIMIT: '5',
      PRICING_RATE_WINDOW_S: '10',
      TRUST_PROXY: 'loopback, 10.0.0.0/8',
      REDIS_URL: 'redis://127.0.0.1:6379',
      PRICING_MAX_STALENESS_S: '30',
      DATABASE_TIMEOUT_S: '2',
      SHUTDOWN_TIMEOUT_S: '3',
      LOG_LEVEL: 'debug',
      LOG_FORMAT: 'pretty',
      METRICS_PORT: '9100',
    });
    expect({ ...config }).toEqual({
      databaseUrl: 'postgres://u:p@db:5432/pricing',
      dataDir: '/var/lib/pricing',
      port: 8080,
      host: '127.0.0.1',
      apiTokens: ['token-aaaaaaaaaaaaaaaa', 'token-bbbbbbbbbbbbbbbb'],
      pricingRateLimit: 5,
      pricingRateWindowS: 10,
      pricingMaxStalenessS: 30,
      trustProxy: 'loopback,10.0.0.0/8',
      redisUrl: 'redis://127.0.0.1:6379',
      databaseTimeoutS: 2,
      shutdownTimeoutS: 3,
      logLevel: 'debug',
      logFormat: 'pretty',
      metricsPort: 9100,
    });
  });

  it.each([
    ['true', true],
    ['false', false],
    ['2', 2],
    ['127.0.0.1', '127.0.0.1'],
  ])('takes TRUST_PROXY=%s as Express does', (value, expected) => {
    expect(loadConfig({ TRUST_PROXY: value }).trustProxy).toEqual(expected);
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['PORT', '1e3'],
    ['PORT', ''],
    ['PRICING_RATE_LIMIT', '0'],
    ['PRICING_RATE_LIMIT', '-5'],
    ['PRICING_RATE_WINDOW_S', '1.5'],
    ['PRICING_MAX_STALENESS_S', 'ten'],
    ['PRICING_MAX_STALENESS_S', '4'],
    ['DATABASE_URL', 'mysql://x'],
    ['REDIS_URL', 'localhost:6379'],
    ['API_TOKENS', 'short'],
    ['API_TOKENS', 'token-aaaaaaaaaaaaaaaa,,token-bbbbbbbbbbbbbbbb'],
    ['TRUST_PROXY', 'not-an-address'],
    ['DATA_DIR', ''],
    ['DATABASE_TIMEOUT_S', '0'],
    ['SHUTDOWN_TIMEOUT_S', 'soon'],
    ['LOG_LEVEL', 'verbose'],
    ['LOG_FORMAT', 'text'],
    ['METRICS_PORT', '65536'],
    ['METRICS_PORT', 'no'],
    ['METRICS_PORT', ''],
  ])('refuses %s=%j with a message naming it', (name, value) => {
    const problems = problemsOf({ [name]: value });
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(new RegExp(`^${name}`));
  });

  it('turns the metrics server off with METRICS_PORT=off', () => {
    expect(loadConfig({ METRICS_PORT: 'off' }).metricsPort).toBe('off');
  });

  it('names every bad variable at once', () => {
    expect(problemsOf({ PORT: 'x', PRICING_RATE_LIMIT: '0' }).map((p) => p.split(' ')[0])).toEqual([
      'PORT',
      'PRICING_RATE_LIMIT',
    ]);
  });
});
