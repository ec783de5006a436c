import type { Server } from 'node:http';
import type { AppConfig } from './config/app-config';

/**
 * How often Node checks the head and request timeouts of open connections. Its default, 30 s,
 * would let a client dribbling its head hold a connection up to 30 s past HTTP_HEADERS_TIMEOUT_S.
 */
const TIMEOUT_CHECK_MS = 1_000;

/**
 * The timeouts of the app's HTTP servers, the API's and the metrics' (README, "Security"): set
 * before the server listens, which reads them.
 */
export function applyHttpTimeouts(
  server: Server,
  config: Pick<AppConfig, 'httpKeepAliveTimeoutS' | 'httpHeadersTimeoutS' | 'httpRequestTimeoutS'>,
): void {
  server.keepAliveTimeout = config.httpKeepAliveTimeoutS * 1000;
  server.headersTimeout = config.httpHeadersTimeoutS * 1000;
  server.requestTimeout = config.httpRequestTimeoutS * 1000;
  (server as Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval = TIMEOUT_CHECK_MS;
}
