import type { Socket } from 'node:net';
import { Client, type ClientConfig } from 'pg';

/** A query that PostgreSQL did not answer in time (a connection attempt fails with pg's own timeout error). */
export class DatabaseTimeoutError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`PostgreSQL did not answer within ${timeoutMs} ms; the connection was dropped`);
    this.name = 'DatabaseTimeoutError';
  }
}

/** A pg Client that can be dropped at once, and whose end() is bounded (see timedClient). */
export interface TimedClient extends Client {
  /**
   * The deadline of each query, in milliseconds: the class's timeout, raised by whoever holds
   * the client for longer work (migrations, migrate.ts) and set back before it returns to the pool.
   */
  deadlineMs: number;
  /** Ends the connection at once, failing what is in flight: no goodbye to a peer that may be gone. */
  drop(reason?: Error): void;
  /**
   * The connection no longer keeps the process alive (pg's own `Client#unref`, which its types
   * leave out): for a connection nothing waits on, such as a LISTEN connection.
   */
  unref(): void;
}

type AnyQuery = (...args: unknown[]) => unknown;

/**
 * A pg Client class whose queries each have a client-side deadline. A server-side
 * statement_timeout is not enough: a connection cut silently (a partition, a NAT that forgot
 * it) never delivers it. At the deadline the socket is destroyed, so the query fails, the pool
 * drops the connection (pg-pool never reuses a client that is not queryable) and a new one is
 * opened on next use. pg's own query_timeout only fails the query: the connection would stay in
 * the pool, and with it the answer of the abandoned query, which the next query would read.
 * The goodbye of end() has the same deadline: on a silent connection it would wait forever for
 * the server to close its side, keeping the socket (and a pool's end()) open. end() holds the
 * event loop until the goodbye is done, also for a connection unref'd before.
 */
export function timedClient(timeoutMs: number): new (config?: string | ClientConfig) => TimedClient {
  return class extends Client implements TimedClient {
    deadlineMs = timeoutMs;

    constructor(config?: string | ClientConfig) {
      super(config);
      const query = (Client.prototype.query as AnyQuery).bind(this);
      (this as unknown as { query: AnyQuery }).query = (...args: unknown[]): unknown => {
        const deadlineMs = this.deadlineMs;
        const timer = setTimeout(() => this.drop(new DatabaseTimeoutError(deadlineMs)), deadlineMs);
        timer.unref();
        const last = args.length - 1;
        if (typeof args[last] === 'function') {
          const callback = args[last] as (...results: unknown[]) => void;
          args[last] = (...results: unknown[]): void => {
            clearTimeout(timer);
            callback(...results);
          };
          return query(...args);
        }
        const result = query(...args);
        if (result instanceof Promise) return result.finally(() => clearTimeout(timer));
        clearTimeout(timer); // a submittable (cursor, stream) reports on its own
        return result;
      };
    }

    drop(reason?: Error): void {
      this.stream().destroy(reason);
    }

    unref(): void {
      this.stream().unref();
    }

    override end(): Promise<void>;
    override end(callback: (error: Error) => void): void;
    override end(callback?: (error: Error) => void): Promise<void> | void {
      const stream = this.stream();
      if (!stream.destroyed) {
        // Whoever ends a connection waits for its goodbye: an unref'd one (unref(), or idle in a
        // pool with allowExitOnIdle) would let the event loop empty first, and end() never settle.
        stream.ref();
        const timer = setTimeout(() => stream.destroy(), timeoutMs);
        timer.unref();
        stream.once('close', () => clearTimeout(timer));
      }
      return callback ? super.end(callback) : super.end();
    }

    private stream(): Socket {
      return (this as unknown as { connection: { stream: Socket } }).connection.stream;
    }
  };
}
