// Preloaded into the app by bench/soak.mjs, bench/rebuild.mjs and bench/scale.mjs (node --expose-gc
// --import), answers on the IPC channel:
// - { type: 'memory' }: process.memoryUsage() after a full garbage collection, so that two
//   readings compare what is live, not what is not yet freed;
// - { type: 'event-loop' }: the worst delay of the app's event loop (ms, wall time) since the last ask;
// - { type: 'cpu-hold' }: since the last ask, from the main thread's /proc schedstat read every
//   millisecond: `holdMs`, the longest it ran on a CPU between two turns of the loop (what our
//   code, GC included, held it), and of the longest gap between two turns, `gapMs` (wall time)
//   and `waitingMs`, the part the thread spent waiting for a CPU (what other processes cost it).
//   The first ask starts the sampler and answers zeros.
import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { setInterval } from 'node:timers';

const histogram = monitorEventLoopDelay({ resolution: 10 });
histogram.enable();

/** The main thread's time on a CPU and waiting for one (ms): /proc/<pid>/task/<pid>/schedstat. */
function schedstat() {
  const [running, waiting] = readFileSync(`/proc/${process.pid}/task/${process.pid}/schedstat`, 'utf8').split(' ');
  return { wall: performance.now(), running: Number(running) / 1e6, waiting: Number(waiting) / 1e6 };
}

let holds;
function sampleHolds() {
  holds = { holdMs: 0, gapMs: 0, waitingMs: 0 };
  let last = schedstat();
  setInterval(() => {
    const now = schedstat();
    holds.holdMs = Math.max(holds.holdMs, now.running - last.running);
    if (now.wall - last.wall > holds.gapMs) {
      holds.gapMs = now.wall - last.wall;
      holds.waitingMs = now.waiting - last.waiting;
    }
    last = now;
  }, 1).unref();
}

if (process.send) {
  process.on('message', (message) => {
    if (message?.type === 'memory') {
      globalThis.gc?.();
      process.send({ type: 'memory', value: process.memoryUsage() });
    } else if (message?.type === 'event-loop') {
      process.send({ type: 'event-loop', value: histogram.max / 1e6 });
      histogram.reset();
    } else if (message?.type === 'cpu-hold') {
      if (holds === undefined) sampleHolds();
      process.send({ type: 'cpu-hold', value: holds });
      holds = { holdMs: 0, gapMs: 0, waitingMs: 0 };
    }
  });
  process.channel?.unref();
}
