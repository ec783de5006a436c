import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { Server as NetServer } from 'node:net';

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
  private readonly inFlight = new Set<ServerResponse>();
  private draining = false;

  constructor(private readonly server: Server) {
    const inFlight = this.inFlight;
    // One listener for every response (`this` is the response): no closure per request.
    function untrack(this: ServerResponse): void {
      inFlight.delete(this);
    }
    // Before the app's own listener, so that the header is set before any handler writes.
    server.prependListener('request', (_request: IncomingMessage, response: ServerResponse) => {
      if (this.draining) {
        response.setHeader('Connection', 'close');
        return;
      }
      inFlight.add(response);
      response.on('close', untrack);
    });
  }

  /**
   * Resolves once every connection is closed: after its last response, or at `deadlineMs`,
   * when the ones still open are closed (`forced`).
   */
  async close(deadlineMs: number): Promise<{ forced: boolean }> {
    this.draining = true;
    for (const response of this.inFlight) closeAfter(response);
    this.inFlight.clear();
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
