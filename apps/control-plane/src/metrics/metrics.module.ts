import { Module } from '@nestjs/common';
import { AppMetrics } from './app-metrics';
import { MetricsServer } from './metrics-server';

/**
 * Prometheus metrics: the app's own (AppMetrics: default process and Node.js metrics, request
 * durations) and the pricing library's (PricingMetrics), served by MetricsServer on METRICS_PORT.
 */
@Module({ providers: [AppMetrics, MetricsServer], exports: [AppMetrics, MetricsServer] })
export class MetricsModule {}
