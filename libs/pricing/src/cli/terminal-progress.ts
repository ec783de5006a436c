import { Presets, SingleBar } from 'cli-progress';
import { NO_PROGRESS, type Progress } from '../price-book/progress';

/** The part of a stream the progress bar needs: stderr, or a stand-in in tests. */
export type ProgressStream = NodeJS.WritableStream & { readonly isTTY?: boolean };

/**
 * Progress bars (cli-progress) on `stream` while it is a terminal, one step at a time, each
 * cleared when it ends; nothing at all when it is not a terminal (a pipe, a file, CI), so
 * redirected output and logs stay clean. The CLI gives it stderr, never stdout.
 */
export function terminalProgress(stream: ProgressStream): Progress {
  if (stream.isTTY !== true) return NO_PROGRESS;
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
          format: `${step.padEnd(8)} [{bar}] {percentage}% | {value}/{total} ${unit} | {duration_formatted}`,
          clearOnComplete: true,
          hideCursor: false, // a cursor hidden by a killed process would stay hidden
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
