import { Writable } from 'node:stream';
import { NO_PROGRESS } from '../price-book/progress';
import { terminalProgress, type ProgressStream } from './terminal-progress';

/** A stream that keeps what is written to it, a terminal or not. */
function stream(isTTY: boolean): ProgressStream & { text(): string } {
  let written = '';
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      written += chunk.toString();
      done();
    },
  });
  return Object.assign(sink, { isTTY, columns: 100, text: () => written });
}

describe('terminalProgress', () => {
  it('shows nothing at all on a stream that is not a terminal', () => {
    const pipe = stream(false);
    const progress = terminalProgress(pipe);
    expect(progress).toBe(NO_PROGRESS);
    progress.start('writing', 10, 'rows');
    progress.update(5);
    progress.stop();
    expect(pipe.text()).toBe('');
  });

  it('draws a bar per step on a terminal, with the step, the counts and the unit, and clears it at the end', () => {
    const tty = stream(true);
    const progress = terminalProgress(tty);
    progress.start('checking', 200, 'entries');
    progress.update(100);
    progress.start('writing', 40, 'rows'); // ends "checking"
    progress.update(40);
    progress.stop();
    progress.stop(); // stopping twice is harmless
    const text = tty.text();
    expect(text).toContain('checking');
    expect(text).toContain('0/200 entries');
    expect(text).toContain('writing');
    expect(text).toContain('40/40 rows');
    expect(text).toMatch(/elapsed, about \S+ left/); // an estimate of what is left
    expect(text.endsWith('\u001b[2K')).toBe(true); // the line is erased: only the command's output stays
    // Nothing a process stopped half way would leave behind: line wrapping and the cursor are never turned off.
    expect(text).not.toContain('\u001b[?7l');
    expect(text).not.toContain('\u001b[?25l');
  });

  it('shows nothing on TERM=dumb, which cannot redraw a line, or with --quiet', () => {
    for (const settings of [{ term: 'dumb' }, { quiet: true }]) {
      const tty = stream(true);
      expect(terminalProgress(tty, settings)).toBe(NO_PROGRESS);
    }
  });
});
