// CPU time of a process, for the benchmark's per-request figures and its waits for idle servers.
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';

/** CPU time (user + system, ms) process `pid` has used so far: /proc/<pid>/stat counts in 1/100 s. */
export function cpuMs(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // fields from the 3rd (state) on
  return (Number(fields[11]) + Number(fields[12])) * 10; // utime and stime, the 14th and 15th
}

/**
 * Resolves once process `pid` uses at most a tenth of a core over 100 ms: a slow server still
 * works through requests it read before the load generator left. Resolves `false` if it is still
 * busy after `ms`.
 */
export async function waitUntilIdle(pid, ms = 60_000) {
  const deadline = performance.now() + ms;
  let last = cpuMs(pid);
  while (performance.now() < deadline) {
    await sleep(100);
    const now = cpuMs(pid);
    if (now - last <= 10) return true;
    last = now;
  }
  return false;
}
