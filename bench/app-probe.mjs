// Preloaded into the app by bench/soak.mjs, bench/rebuild.mjs and bench/scale.mjs (node --expose-gc
// --import), answers on the IPC channel:
// - { type: 'memory' }: process.memoryUsage() after two full garbage collections, so that two
//   readings compare what is live, not what is not yet freed;
// - { type: 'event-loop' }: the worst delay of the app's event loop (ms, wall time) since the last ask;
// - { type: 'cpu-hold' }: since the last ask, from the main thread's /proc schedstat read every
//   millisecond: `holdMs`, the longest it ran on a CPU between two turns of the loop (what our
//   code, GC included, held it), and of the longest gap between two turns, `gapMs` (wall time)
//   and `waitingMs`, the part the thread spent waiting for a CPU (what other processes cost it).
//   The first ask starts the sampler and answers zeros.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setTimeout } from 'node:timers';
import { holdSampler } from './schedstat.mjs';

const histogram = monitorEventLoopDelay({ resolution: 10 });
histogram.enable();

let holds;

if (process.send) {
  process.on('message', (message) => {
    if (message?.type === 'memory') {
      // Twice: a collection that finishes a marking already under way keeps what died since it
      // began (up to 60 MiB of the start-up's arrays at five years of history); the second frees it.
      globalThis.gc?.();
      setTimeout(() => {
        globalThis.gc?.();
        process.send({ type: 'memory', value: process.memoryUsage() });
      }, 100);
    } else if (message?.type === 'event-loop') {
      process.send({ type: 'event-loop', value: histogram.max / 1e6 });
      histogram.reset();
    } else if (message?.type === 'cpu-hold') {
      holds ??= holdSampler();
      process.send({ type: 'cpu-hold', value: holds.take() });
    }
  });
  process.channel?.unref();
}
