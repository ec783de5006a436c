// The clock every module takes "now" from: `@app/clock`.
export { Clock, SystemClock, ManualClock } from './clock';
export { ClockModule } from './clock.module';
