import { Presets, SingleBar } from 'cli-progress';
import { NO_PROGRESS, type Progress } from '../price-book/progress';

/** The part of a stream the progress bar needs: stderr, or a stand-in in tests. */
export type ProgressStream = NodeJS.WritableStream & { readonly isTTY?: boolean };

/** What the environment says of the terminal: TERM, and whether progress is wanted at all (`--quiet`). */
export interface TerminalSettings {
  /** TERM: `dumb` is a terminal that cannot move its cursor, where a bar would print line after line. */
  readonly term?: string;
  /** `--quiet`: no progress. */
  readonly quiet?: boolean;
}

/**
 * Progress bars (cli-progress) on `stream` while it is a terminal that can redraw a line (not
 * TERM=dumb) and progress is wanted (not `--quiet`), one step at a time, each with how long it
 * has run and an estimate of what is left, cleared when it ends; nothing at all otherwise (a pipe,
 * a file, CI), so redirected output and logs stay clean. The CLI gives it stderr, never stdout.
 * The bars use no colour (NO_COLOR needs nothing more), keep the cursor shown and line wrapping on
 * (a bar is cut to the terminal's width instead): a process stopped half way leaves the terminal
 * as it found it; `stop` erases the bar.
 */
export function terminalProgress(stream: ProgressStream, settings: TerminalSettings = {}): Progress {
  if (stream.isTTY !== true || settings.term === 'dumb' || settings.quiet === true) return NO_PROGRESS;
  let bar: SingleBar | undefined;
  const stop = (): void => {
    bar?.stop();
    bar = undefined;
  };
  return {
    start(step, total, unit) {
      stop();
      bar = new SingleBar(
        {
          stream,
          // Short enough for 80 columns with six-figure counts: the estimate is what is cut last.
          format: `${step.padEnd(8)} [{bar}] {percentage}% {value}/{total} ${unit}, {duration_formatted} elapsed, about {eta_formatted} left`,
          barsize: 16,
          clearOnComplete: true,
          hideCursor: false, // a cursor hidden by a killed process would stay hidden
          linewrap: true, // never turned off: a killed process would leave it off
          gracefulExit: false, // the CLI stops the bar itself on Ctrl-C, then says what happened
          etaBuffer: 50,
          noTTYOutput: false,
        },
        Presets.shades_classic,
      );
      bar.start(total, 0);
    },
    update: (done) => bar?.update(done),
    stop,
  };
}
