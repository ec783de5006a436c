import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';

/** utime + stime (ms) of a /proc `stat` file (Linux; USER_HZ = 100, so 10 ms steps). */
function cpuMsOfStat(path: string): number {
  const stat = readFileSync(path, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10; // in clock ticks
}

/**
 * CPU time (ms) of this process's main thread, from /proc. Elsewhere, the whole process's
 * (worker threads included: a looser measure).
 */
function mainThreadCpuMs(): number {
  try {
    return cpuMsOfStat(`/proc/self/task/${process.pid}/stat`);
  } catch {
    const { user, system } = process.cpuUsage();
    return (user + system) / 1000;
  }
}

/**
 * CPU time (ms) another process has used, all its threads, from /proc; undefined where there is
 * none. Unlike a request's wall time, it does not grow when other processes take the cores.
 */
export function processCpuMs(pid: number | undefined): number | undefined {
  try {
    return cpuMsOfStat(`/proc/${pid}/stat`);
  } catch {
    return undefined;
  }
}

export interface EventLoopHolds {
  /** The worst delay of the event loop, in wall time (monitorEventLoopDelay): what a request waited. */
  readonly worstDelayMs: number;
  /**
   * The most CPU time the main thread spent between two turns of the event loop: the longest
   * piece of work that held it. Unlike the wall-time delay, it does not grow when other processes
   * take the cores (a busy machine), and a synchronous render shows in full.
   */
  readonly longestHoldMs: number;
}

/**
 * Watches the event loop of this process (the app runs in-process) until `stop()`, which
 * resolves after two more turns of the loop, so that the turn that ended the watched work is
 * counted too.
 */
export function watchEventLoop(): { stop(): Promise<EventLoopHolds> } {
  const histogram = monitorEventLoopDelay({ resolution: 5 });
  histogram.enable();
  let longestHoldMs = 0;
  let lastWall = performance.now();
  let lastCpu = mainThreadCpuMs();
  const probe = setInterval(() => {
    const wall = performance.now();
    const cpu = mainThreadCpuMs();
    longestHoldMs = Math.max(longestHoldMs, Math.min(cpu - lastCpu, wall - lastWall + 10));
    [lastWall, lastCpu] = [wall, cpu];
  }, 2);
  return {
    async stop(): Promise<EventLoopHolds> {
      for (let turn = 0; turn < 2; turn++) await new Promise((resolve) => setTimeout(resolve, 10));
      clearInterval(probe);
      histogram.disable();
      return { worstDelayMs: histogram.max / 1e6, longestHoldMs };
    },
  };
}
