// Preloaded into the app by bench/soak.mjs and bench/rebuild.mjs (node --expose-gc --import):
// answers { type: 'memory' } on the IPC channel with the app's process.memoryUsage() after a
// full garbage collection, so that two readings compare what is live, not what is not yet freed.
if (process.send) {
  process.on('message', (message) => {
    if (message?.type !== 'memory') return;
    globalThis.gc?.();
    process.send({ type: 'memory', usage: process.memoryUsage() });
  });
  process.channel?.unref();
}
