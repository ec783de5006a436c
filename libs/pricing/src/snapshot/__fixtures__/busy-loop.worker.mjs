// A price list worker that hangs busy (price-list-renderer.built-spec.ts): it never gives its
// event loop a turn, so only worker.terminate() ends it.
for (;;) {
  // spin
}
