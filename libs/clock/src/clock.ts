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

/** A clock that stands still until it is set or advanced: for tests of transitions without sleeping. */
export class ManualClock extends Clock {
  private instantMs: number;

  constructor(instant: Date | string) {
    super();
    this.instantMs = new Date(instant).getTime();
  }

  now(): Date {
    return new Date(this.instantMs);
  }

  override nowMs(): number {
    return this.instantMs;
  }

  set(instant: Date | string): void {
    this.instantMs = new Date(instant).getTime();
  }

  advance(ms: number): void {
    this.instantMs += ms;
  }
}
