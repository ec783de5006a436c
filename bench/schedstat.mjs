// The main thread's time on a CPU and waiting for one, from /proc: what bench/app-probe.mjs (loaded
// into the app, so this module loads nothing else) and bench/rebuild.mjs sample. Linux only.
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { clearInterval, setInterval } from 'node:timers';

/** A process's main thread: its time on a CPU and waiting for one (ms, /proc schedstat). */
export function mainThreadTimes(pid = process.pid) {
  const [running, waiting] = readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ');
  return { running: Number(running) / 1e6, waiting: Number(waiting) / 1e6 };
}

/**
 * Samples this process's main thread every millisecond. `take()` gives, since the last take (or
 * the start): `holdMs`, the longest it ran on a CPU between two turns of the loop, and of the
 * longest gap between two turns, `gapMs` (wall time) and `waitingMs`, the part it spent waiting
 * for a CPU (what other processes cost it).
 */
export function holdSampler() {
  const zero = () => ({ holdMs: 0, gapMs: 0, waitingMs: 0 });
  let holds = zero();
  let last = { wall: performance.now(), ...mainThreadTimes() };
  const timer = setInterval(() => {
    const now = { wall: performance.now(), ...mainThreadTimes() };
    holds.holdMs = Math.max(holds.holdMs, now.running - last.running);
    if (now.wall - last.wall > holds.gapMs) {
      holds.gapMs = now.wall - last.wall;
      holds.waitingMs = now.waiting - last.waiting;
    }
    last = now;
  }, 1).unref();
  return {
    take() {
      const taken = holds;
      holds = zero();
      return taken;
    },
    stop: () => clearInterval(timer),
  };
}
