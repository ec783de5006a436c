import { createServer, connect, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy a test controls, to build network faults: `forward` relays both ways;
 * `cut()` destroys every connection and refuses new ones (the peer is gone); `heal()` forwards
 * new connections again.
 */
export class TcpProxy {
  private readonly sockets = new Set<Socket>();
  private cutOff = false;

  private constructor(
    private readonly server: Server,
    readonly port: number,
  ) {}

  static async start(targetHost: string, targetPort: number): Promise<TcpProxy> {
    const proxies: TcpProxy[] = [];
    const server = createServer((client) => proxies[0].relay(client, targetHost, targetPort));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    proxies.push(new TcpProxy(server, (server.address() as { port: number }).port));
    return proxies[0];
  }

  cut(): void {
    this.cutOff = true;
    for (const socket of this.sockets) socket.destroy();
  }

  heal(): void {
    this.cutOff = false;
  }

  close(): Promise<void> {
    this.cut();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private relay(client: Socket, host: string, port: number): void {
    if (this.cutOff) return void client.destroy();
    const upstream = connect(port, host);
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
      socket.on('error', () => undefined);
    }
    client.pipe(upstream).pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  }
}
