/**
 * Progress of a long step (reading, checking or writing a large book), for an operator at a
 * terminal. The price book code reports through this and never knows where it is shown: the
 * CLI shows it on stderr when that is a terminal (cli/terminal-progress.ts), others ignore it.
 */
export interface Progress {
  /** Starts a step of `total` units (bytes, entries, rows); a step still running ends. */
  start(step: string, total: number, unit: string): void;
  /** `done` units of the current step are done. */
  update(done: number): void;
  /** Ends the current step, if any; the progress display is gone. */
  stop(): void;
}

/** Reports nothing. */
export const NO_PROGRESS: Progress = {
  start: () => undefined,
  update: () => undefined,
  stop: () => undefined,
};
