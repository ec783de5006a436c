/** The source of "now" for everything that depends on time; tests replace it. */
export abstract class Clock {
  abstract now(): Date;

  /** The same instant in milliseconds, for hot paths that need no Date. */
  nowMs(): number {
    return this.now().getTime();
  }
}

export class SystemClock extends Clock {
  now(): Date {
    return new Date();
  }

  override nowMs(): number {
    return Date.now();
  }
}
