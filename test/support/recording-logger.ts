import type { LoggerService } from '@nestjs/common';

/** A Nest logger that keeps every line, for tests that count what was logged. */
export class RecordingLogger implements LoggerService {
  readonly lines: { level: string; context: string; message: string }[] = [];

  log(message: unknown, context?: string): void {
    this.record('log', message, context);
  }

  warn(message: unknown, context?: string): void {
    this.record('warn', message, context);
  }

  /** Nest passes `message, stack, context` (the stack may be absent): the context is the last. */
  error(message: unknown, ...params: unknown[]): void {
    const context = params.at(-1);
    this.record('error', message, typeof context === 'string' ? context : undefined);
  }

  debug(message: unknown, context?: string): void {
    this.record('debug', message, context);
  }

  verbose(message: unknown, context?: string): void {
    this.record('verbose', message, context);
  }

  /** Lines of one level from one context. */
  of(level: string, context: string): string[] {
    return this.lines.filter((l) => l.level === level && l.context === context).map((l) => l.message);
  }

  private record(level: string, message: unknown, context = ''): void {
    this.lines.push({ level, context, message: String(message) });
  }
}
