import { connect, type Socket } from 'node:net';
import { performance } from 'node:perf_hooks';
import { processCpuMs } from './event-loop';
import type { RawResponse } from './raw-http';

// Loads an attacker can put on an HTTP server, while a probe of a cheap route is timed: for the
// hostile-input suites of the API, the metrics server and the price page (docs/tests.md: bounds
// generous for a busy 2-core machine, CPU time where wall time would flake).

export interface Timed<T> {
  readonly value: T;
  readonly ms: number;
}

export async function timed<T>(work: Promise<T>): Promise<Timed<T>> {
  const started = performance.now();
  const value = await work;
  return { value, ms: performance.now() - started };
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

/**
 * Three rounds of eight `send()` at once, each with a `probe()` (which must answer 200), timed.
 * With what each request cost the server process `pid` in CPU time, which a busy machine does not
 * inflate as it does the probe's wall time; 0 where there is no /proc to read it from.
 */
export async function eightAtOnce(
  pid: number | undefined,
  send: () => Promise<RawResponse>,
  probe: () => Promise<RawResponse>,
): Promise<{ answers: Timed<RawResponse>[]; probes: number[]; cpuMsPerRequest: number }> {
  const cpuBefore = processCpuMs(pid);
  const answers: Timed<RawResponse>[] = [];
  const probes: number[] = [];
  for (let round = 0; round < 3; round++) {
    const requests = Array.from({ length: 8 }, () => timed(send()));
    const probed = timed(probe());
    answers.push(...(await Promise.all(requests)));
    const { value, ms } = await probed;
    expect(value.status).toBe(200);
    probes.push(ms);
  }
  const cpuAfter = processCpuMs(pid);
  const cpuMsPerRequest = cpuBefore === undefined || cpuAfter === undefined ? 0 : (cpuAfter - cpuBefore) / 27;
  return { answers, probes, cpuMsPerRequest };
}

/**
 * 200 clients send `start` (a request line and some headers) to `port`, then one more header every
 * 250 ms, never ending their heads. Meanwhile `probe()` is timed every 100 ms for `probeForMs`.
 * Returns the probes' times and when each client was dropped by the server (ms since they
 * connected; Infinity for one still open `closeWithinMs` after they connected). Every client is
 * closed before it returns.
 */
export async function dribbledHeads(
  port: number,
  start: string,
  probe: () => Promise<RawResponse>,
  { probeForMs, closeWithinMs }: { probeForMs: number; closeWithinMs: number },
): Promise<{ probesMs: number[]; droppedAfterMs: number[] }> {
  const dribblers: Socket[] = [];
  const dropped: Promise<number>[] = [];
  const started = performance.now();
  for (let i = 0; i < 200; i++) {
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => undefined);
    dribblers.push(socket);
    dropped.push(new Promise((done) => socket.once('close', () => done(performance.now() - started))));
    socket.write(start);
  }
  const drip = setInterval(() => {
    for (const socket of dribblers) if (!socket.destroyed) socket.write('X-Slow: a\r\n');
  }, 250);
  let giveUp: NodeJS.Timeout | undefined;
  try {
    const probesMs: number[] = [];
    while (performance.now() - started < probeForMs) {
      probesMs.push((await timed(probe())).ms);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const deadline = new Promise<number>((done) => {
      giveUp = setTimeout(() => done(Infinity), Math.max(0, closeWithinMs - (performance.now() - started)));
    });
    const droppedAfterMs = await Promise.all(dropped.map((closed) => Promise.race([closed, deadline])));
    return { probesMs, droppedAfterMs };
  } finally {
    clearTimeout(giveUp);
    clearInterval(drip);
    for (const socket of dribblers) socket.destroy();
  }
}
