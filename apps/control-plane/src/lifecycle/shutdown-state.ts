import { Injectable } from '@nestjs/common';

/**
 * Whether the process is stopping. main.ts sets it on the first stop signal, before the HTTP
 * server stops taking requests: from then on readiness answers 503, while the requests in
 * flight finish.
 */
@Injectable()
export class ShutdownState {
  private isStopping = false;

  get stopping(): boolean {
    return this.isStopping;
  }

  begin(): void {
    this.isStopping = true;
  }
}
