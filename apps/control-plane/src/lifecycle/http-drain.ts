import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { Server as NetServer, type Socket } from 'node:net';

/** How long a keep-alive connection idle at the stop signal may still bring one more request. */
export const IDLE_GRACE_MS = 1_000;

/**
 * Closes an HTTP server as a stop signal asks (docs/operations.md, "Shutdown"): it stops accepting,
 * lets every request in flight finish and closes its connection after that response
 * (`Connection: close`), closes the keep-alive connections that stayed idle, and at the deadline
 * closes whatever is still open. Node's server.close() alone keeps serving a keep-alive
 * connection that is never idle for long: a client that never pauses would hold it, and the
 * process, open.
 */
export class HttpDrain {
  /**
   * The open connections. Connections, not requests, are tracked: a keep-alive connection brings
   * many requests, and nothing is added to a request's path (a listener and a set entry per
   * request cost the price list about 2 % of its CPU in process: docs/benchmarks.md).
   */
  private readonly connections = new Set<Socket>();

  constructor(private readonly server: Server) {
    const connections = this.connections;
    // One listener for every connection (`this` is the socket): no closure per connection.
    function untrack(this: Socket): void {
      connections.delete(this);
    }
    server.on('connection', (socket: Socket) => {
      connections.add(socket);
      socket.once('close', untrack);
    });
  }

  /**
   * Resolves once every connection is closed: after its last response, or at `deadlineMs`,
   * when the ones still open are closed (`forced`).
   */
  async close(deadlineMs: number): Promise<{ forced: boolean }> {
    // Every request from now on is answered with Connection: close. Before the app's own
    // listener, so that the header is set before any handler writes.
    this.server.prependListener('request', (_request: IncomingMessage, response: ServerResponse) =>
      response.setHeader('Connection', 'close'),
    );
    for (const socket of this.connections) {
      // The response being written on the connection, if any: Node's own record of it, which
      // http.Server#closeIdleConnections reads too (cleared once the response has finished).
      const inFlight = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
      if (inFlight) closeAfter(inFlight);
    }
    // Stops accepting. Not through http.Server#close(): it also closes the idle connections at
    // once, and the server's side of a client that never pauses is idle most of the time, with
    // its next request already on the way; that request would meet a reset connection. A
    // connection idle at the signal gets a short grace to bring one more request (answered with
    // Connection: close) before the ones still idle are closed.
    const closed = new Promise<void>((resolve) => NetServer.prototype.close.call(this.server, () => resolve()));
    const idle = setTimeout(() => this.server.closeIdleConnections(), Math.min(IDLE_GRACE_MS, deadlineMs));
    let forced = false;
    const deadline = setTimeout(() => {
      forced = true;
      this.server.closeAllConnections();
    }, deadlineMs);
    await closed;
    clearTimeout(idle);
    clearTimeout(deadline);
    return { forced };
  }

  /** Closes every connection now, whether its response is done or not. */
  closeAll(): void {
    this.server.closeAllConnections();
  }
}

/** The connection of a response in flight is closed once the response is complete. */
function closeAfter(response: ServerResponse): void {
  if (!response.headersSent) {
    response.setHeader('Connection', 'close');
    return;
  }
  // Its headers promised keep-alive already: close once the body is out.
  const socket = response.socket;
  response.once('finish', () => socket?.end());
}
