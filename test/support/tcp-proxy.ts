import { readdir, readlink } from 'node:fs/promises';
import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { tcpSockets } from './proc-net';

interface Link {
  readonly client: Socket;
  /** The connection to the target; none for a connection accepted during a partition. */
  readonly upstream: Socket | undefined;
  forwarding: boolean;
}

/**
 * A TCP proxy on loopback that can cut the network silently, as a partition does (or a NAT
 * that forgot its connections): `partition()` stops forwarding in both directions but keeps
 * every socket open, so neither side hears anything (no FIN, no RST, no data); connections
 * opened during the partition are accepted and then hear nothing either. `heal()` forwards new
 * connections again; the ones from before stay dead, as after a real partition. `hold()` makes a
 * slow network instead: new connections are accepted and left waiting, unread, until `release()`
 * forwards them.
 */
export class TcpProxy {
  private readonly links = new Set<Link>();
  private forwarding = true;
  /** While set, every connection is reset at once: the peer is gone (see drop()). */
  private refusing = false;
  /** Connections accepted while holding (see hold()), not read yet. */
  private held: Set<Socket> | undefined;
  /** Connections accepted since the last partition() (all of them before the first). */
  acceptedSincePartition = 0;

  private constructor(
    private readonly server: Server,
    private target: { readonly host: string; readonly port: number },
  ) {
    server.on('connection', (client) => this.accept(client));
  }

  /** A proxy to the server of `databaseUrl`. */
  static async start(target: { host: string; port: number }): Promise<TcpProxy> {
    // allowHalfOpen: a FIN from a client is not answered with ours, unless it is forwarded.
    const server = createServer({ allowHalfOpen: true, pauseOnConnect: false });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    return new TcpProxy(server, target);
  }

  get port(): number {
    const address = this.server.address();
    if (typeof address !== 'object' || !address) throw new Error('the proxy is not listening');
    return address.port;
  }

  /** New connections go to `target` from now on (a service restarted on another port, behind one address). */
  retarget(target: { host: string; port: number }): void {
    this.target = target;
  }

  /** `url` with its host and port replaced by the proxy's. */
  urlOf(url: string): string {
    const parsed = new URL(url);
    parsed.hostname = '127.0.0.1';
    parsed.port = String(this.port);
    return parsed.toString();
  }

  /** Every connection, open or new, stops forwarding; every socket stays open. */
  partition(): void {
    this.forwarding = false;
    this.acceptedSincePartition = 0;
    for (const link of this.links) link.forwarding = false;
  }

  /**
   * Only the given connections (by the local port of their connection to the target) stop
   * forwarding, silently; the others and new ones go on.
   */
  cut(ports: readonly number[]): void {
    for (const link of this.links) {
      if (link.upstream?.localPort !== undefined && ports.includes(link.upstream.localPort)) link.forwarding = false;
    }
  }

  /**
   * The target is gone, loudly: every connection is reset and new ones are reset as they come,
   * as when a server is down (unlike partition(), where nothing is heard at all).
   */
  drop(): void {
    this.refusing = true;
    for (const link of this.links) {
      link.client.resetAndDestroy();
      link.upstream?.destroy();
    }
  }

  /** New connections are accepted and wait, unread and unanswered, until release(). */
  hold(): void {
    this.held ??= new Set();
  }

  /** The connections held are forwarded from now on, what they sent first included, and new ones too. */
  release(): void {
    const held = this.held ?? new Set<Socket>();
    this.held = undefined;
    for (const client of held) this.accept(client);
  }

  /** New connections are forwarded again; those opened before stay dead. */
  heal(): void {
    this.forwarding = true;
    this.refusing = false;
  }

  /** The local ports of the proxy's forwarding connections to the target (pg_stat_activity's client_port). */
  forwardingPorts(): number[] {
    return [...this.links].flatMap((link) =>
      link.forwarding && link.upstream?.localPort !== undefined ? [link.upstream.localPort] : [],
    );
  }

  /**
   * How many sockets this process holds open to the proxy (Linux: /proc). A socket that was
   * destroyed no longer counts, even while the kernel finishes it (it has no descriptor then);
   * one that was only half-closed (end(), waiting for a FIN that never comes) still does.
   */
  async socketsHeldByThisProcess(): Promise<number> {
    const held = new Set<string>();
    for (const fd of await readdir('/proc/self/fd')) {
      const target = await readlink(`/proc/self/fd/${fd}`).catch(() => '');
      const inode = /^socket:\[(\d+)\]$/.exec(target)?.[1];
      if (inode) held.add(inode);
    }
    return (await tcpSockets()).filter((socket) => socket.remotePort === this.port && held.has(socket.inode)).length;
  }

  /** Closes the proxy and destroys every connection, dead or alive. */
  async close(): Promise<void> {
    for (const link of this.links) {
      link.client.destroy();
      link.upstream?.destroy();
    }
    this.links.clear();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket): void {
    if (this.refusing) {
      client.on('error', () => undefined);
      client.resetAndDestroy();
      return;
    }
    const held = this.held;
    if (held) {
      client.pause();
      client.on('error', () => undefined);
      held.add(client);
      client.once('close', () => held.delete(client));
      return;
    }
    this.acceptedSincePartition += 1;
    const upstream = this.forwarding
      ? createConnection({ host: this.target.host, port: this.target.port, allowHalfOpen: true })
      : undefined;
    const link: Link = { client, upstream, forwarding: upstream !== undefined };
    this.links.add(link);
    const forget = (): void => {
      if (client.destroyed && (upstream?.destroyed ?? true)) this.links.delete(link);
    };
    // A dead link reads and drops what arrives, and answers nothing, not even a FIN.
    client.on('data', (chunk: Buffer) => {
      if (link.forwarding) upstream?.write(chunk);
    });
    client.on('end', () => {
      if (link.forwarding) upstream?.end();
    });
    client.on('error', () => undefined);
    client.on('close', () => {
      if (link.forwarding) upstream?.destroy();
      forget();
    });
    client.resume(); // a connection held (hold()) was paused: what it sent first goes on now
    if (!upstream) return;
    upstream.on('data', (chunk: Buffer) => {
      if (link.forwarding) client.write(chunk);
    });
    upstream.on('end', () => {
      if (link.forwarding) client.end();
    });
    upstream.on('error', () => undefined);
    upstream.on('close', () => {
      if (link.forwarding) client.destroy();
      forget();
    });
  }
}
