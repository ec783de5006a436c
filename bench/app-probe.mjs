// Preloaded into the app by bench/soak.mjs and bench/rebuild.mjs (node --expose-gc --import),
// answers on the IPC channel:
// - { type: 'memory' }: process.memoryUsage() after a full garbage collection, so that two
//   readings compare what is live, not what is not yet freed;
// - { type: 'event-loop' }: the worst delay of the app's event loop (ms) since the last ask.
import { monitorEventLoopDelay } from 'node:perf_hooks';

const histogram = monitorEventLoopDelay({ resolution: 10 });
histogram.enable();

if (process.send) {
  process.on('message', (message) => {
    if (message?.type === 'memory') {
      globalThis.gc?.();
      process.send({ type: 'memory', value: process.memoryUsage() });
    } else if (message?.type === 'event-loop') {
      process.send({ type: 'event-loop', value: histogram.max / 1e6 });
      histogram.reset();
    }
  });
  process.channel?.unref();
}
