// Preloaded into the app by bench/soak.mjs, bench/rebuild.mjs, bench/scale.mjs and bench/history.mjs
// (node --expose-gc --import), answers on the IPC channel:
// - { type: 'memory' }: process.memoryUsage() after two full garbage collections, so that two
//   readings compare what is live, not what is not yet freed;
// - { type: 'event-loop' }: the worst delay of the app's event loop (ms, wall time) since the last ask;
// - { type: 'cpu-hold' }: since the last ask, from the main thread's /proc schedstat read every
//   millisecond: `holdMs`, the longest it ran on a CPU between two turns of the loop (what our
//   code, GC included, held it), and of the longest gap between two turns, `gapMs` (wall time)
//   and `waitingMs`, the part the thread spent waiting for a CPU (what other processes cost it).
//   The first ask starts the sampler and answers zeros; with BENCH_PROBE_FROM_FIRST_REQUEST=1 in
//   the app's environment, its first request does (what requests wait behind from when it
//   listens, not the loading of its modules before), and resets the event loop's histogram and
//   the pauses below (bench/history.mjs: the first load);
// - { type: 'gc' }: since the last ask, V8's longest pause and all its pauses (`longestMs`,
//   `totalMs`, `count`: the collector's time on the main thread, PerformanceObserver 'gc').
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import { setImmediate, setTimeout } from 'node:timers';
import { holdSampler } from './schedstat.mjs';

const histogram = monitorEventLoopDelay({ resolution: 10 });
histogram.enable();

let holds;

const noPauses = () => ({ longestMs: 0, totalMs: 0, count: 0 });
let pauses = noPauses();

const FIRST_REQUEST = 'http.server.request.start';
function onFirstRequest() {
  setImmediate(() => unsubscribe(FIRST_REQUEST, onFirstRequest)); // not while the channel publishes
  if (holds) return;
  holds = holdSampler();
  histogram.reset();
  pauses = noPauses();
}
if (process.env.BENCH_PROBE_FROM_FIRST_REQUEST === '1') subscribe(FIRST_REQUEST, onFirstRequest);
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    pauses.longestMs = Math.max(pauses.longestMs, entry.duration);
    pauses.totalMs += entry.duration;
    pauses.count++;
  }
}).observe({ entryTypes: ['gc'] });

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
    } else if (message?.type === 'gc') {
      process.send({ type: 'gc', value: pauses });
      pauses = noPauses();
    }
  });
  process.channel?.unref();
}
