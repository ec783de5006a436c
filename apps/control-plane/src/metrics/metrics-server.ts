import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { PricingMetrics } from '@app/pricing';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Registry } from 'prom-client';
import { AppConfig } from '../config/app-config';
import { applyHttpTimeouts } from '../http-timeouts';
import { AppMetrics } from './app-metrics';

const METRICS_PATH = '/metrics';

/**
 * Prometheus text at `GET /metrics` on METRICS_PORT (on HOST), a server of its own: never on
 * the API's port. Metrics never take the API down: when the port cannot be had (several
 * instances on one host), the instance logs a warning and serves without metrics.
 */
@Injectable()
export class MetricsServer implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Metrics');
  private readonly registry: Registry;
  private server: Server | undefined;

  constructor(
    private readonly config: AppConfig,
    app: AppMetrics,
    pricing: PricingMetrics,
  ) {
    this.registry = Registry.merge([app.registry, pricing.registry]);
  }

  /** `http://host:port/metrics` while serving (the port is known once listening, also for port 0). */
  get url(): string | undefined {
    const address = this.server?.listening ? (this.server.address() as AddressInfo) : undefined;
    const host = this.config.host.includes(':') ? `[${this.config.host}]` : this.config.host;
    return address && `http://${host}:${address.port}${METRICS_PATH}`;
  }

  async onApplicationBootstrap(): Promise<void> {
    const { metricsPort: port, host } = this.config;
    if (port === 'off') return;
    const server = createServer((req, res) => void this.answer(req, res));
    applyHttpTimeouts(server, this.config); // as the API's: a client dribbling its head is dropped
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(port, host, () => {
          server.off('error', reject);
          resolve();
        });
      });
    } catch (error) {
      this.logger.warn(
        `cannot serve metrics on ${host}:${port} (${(error as Error).message}): serving without metrics`,
      );
      return;
    }
    this.server = server;
    this.logger.log(`metrics on ${this.url}`);
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }

  private async answer(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = req.url?.split('?', 1)[0];
    if (path !== METRICS_PATH)
      return end(res, 404, 'text/plain; charset=utf-8', 'Not Found: metrics are at /metrics\n');
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET, HEAD');
      return end(res, 405, 'text/plain; charset=utf-8', 'Method Not Allowed: use GET or HEAD\n');
    }
    try {
      end(res, 200, this.registry.contentType, await this.registry.metrics(), req.method === 'HEAD');
    } catch (error) {
      this.logger.error(`collecting metrics failed: ${(error as Error).message}`);
      end(res, 500, 'text/plain; charset=utf-8', 'collecting metrics failed\n');
    }
  }
}

function end(res: ServerResponse, status: number, contentType: string, body: string, head = false): void {
  res.writeHead(status, { 'content-type': contentType, 'content-length': Buffer.byteLength(body) });
  res.end(head ? undefined : body);
}
