import { readFile } from 'node:fs/promises';

/** A TCP socket of this machine's network namespace, as Linux lists it in /proc/net/tcp{,6}. */
export interface TcpSocket {
  readonly localPort: number;
  readonly remotePort: number;
  /** Bytes received and not yet read by the process that holds the socket. */
  readonly unread: number;
  /** 0 once no process holds the socket (the kernel is only finishing it). */
  readonly inode: string;
}

/** Every TCP socket, as the kernel sees it: for tests that must know what a process did with a socket. */
export async function tcpSockets(): Promise<TcpSocket[]> {
  const sockets: TcpSocket[] = [];
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    const lines = (await readFile(table, 'utf8').catch(() => '')).split('\n').slice(1);
    for (const line of lines) {
      // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode
      const fields = line.trim().split(/\s+/);
      if (fields.length < 10) continue;
      sockets.push({
        localPort: parseInt(fields[1].split(':')[1], 16),
        remotePort: parseInt(fields[2].split(':')[1], 16),
        unread: parseInt(fields[4].split(':')[1], 16),
        inode: fields[9],
      });
    }
  }
  return sockets;
}
