import { Injectable, Logger } from '@nestjs/common';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { shutdownTelemetry } from './telemetry';

const TELEMETRY_FLUSH_MS = 2000;

/**
 * The process's drain: once SIGTERM arrives `draining` is true (readiness answers 503), every answer
 * carries `Connection: close`, long-lived streams are told to go (`onDrain` hooks), the server stops
 * accepting connections once nothing is in flight (or half the deadline passed), requests in flight
 * get until the deadline, then the app closes and the process exits. Nothing an open stream or a kept-alive client does can hold the exit past the deadline.
 */
@Injectable()
export class ShutdownDrain {
  private readonly logger = new Logger('Shutdown');
  private readonly hooks: (() => void)[] = [];
  private readonly idleWaiters = new Set<() => void>();
  private inFlight = 0;
  private readonly open = new Set<ServerResponse>();
  private started = false;

  get draining(): boolean {
    return this.started;
  }

  /** Runs `hook` when the drain starts (the edge ends its GET streams so clients reconnect elsewhere). */
  onDrain(hook: () => void): void {
    this.hooks.push(hook);
  }

  /** Counts the server's requests in flight and closes each connection after its answer once draining. */
  attach(server: Server): void {
    // One close listener for every answer (an answer closes once), not a closure and a `once`
    // wrapper made for each request.
    const answered = answerClosedListener(this);
    server.prependListener('request', (_req: IncomingMessage, res: ServerResponse) => {
      if (this.started) res.setHeader('Connection', 'close');
      this.inFlight++;
      this.open.add(res);
      res.on('close', answered);
    });
  }

  /** An answer closed (sent, or its connection gone): no longer in flight. */
  answered(res: ServerResponse): void {
    if (!this.open.delete(res)) return;
    this.inFlight--;
    if (this.inFlight === 0) for (const wake of this.idleWaiters) wake();
  }

  /**
   * Drains `server` and then runs `close` (the app's shutdown hooks: leases given back, Redis and
   * Postgres closed), all within `deadlineMs`; resolves whether or not everything finished in time.
   */
  async run(server: Server, deadlineMs: number, close: () => Promise<void>): Promise<void> {
    if (this.started) return;
    this.started = true;
    const deadline = Date.now() + deadlineMs;
    this.logger.log(`draining: ${this.inFlight} request(s) in flight, deadline ${deadlineMs} ms`);
    // Answers not yet begun close their connection too.
    for (const res of this.open) if (!res.headersSent) res.setHeader('Connection', 'close');
    for (const hook of this.hooks) {
      try {
        hook();
      } catch (err) {
        this.logger.warn(`drain hook failed: ${(err as Error).message}`);
      }
    }
    // Kept-alive connections close after their next answer (`Connection: close`), not under a
    // request the client may be sending right now. New connections are still answered (readiness says 503, calls are served with `Connection: close`)
    // while the load balancer takes this replica out: until nothing is in flight, or half the deadline.
    await this.idle(deadlineMs / 2);
    server.close();
    server.closeIdleConnections();
    // Closing the app takes a moment (leases, Redis, Postgres): keep a tenth of the deadline for it.
    const finished = await this.idle(deadline - Date.now() - Math.min(2000, deadlineMs / 10));
    if (!finished) this.logger.warn(`deadline reached with ${this.inFlight} request(s) still in flight; closing them`);
    server.closeAllConnections();
    const closed = await Promise.race([
      close().then(() => true),
      new Promise<false>((r) => setTimeout(() => r(false), Math.max(0, deadline - Date.now())).unref()),
    ]);
    if (!closed) this.logger.warn('shutdown hooks did not finish before the deadline');
    this.logger.log('drained');
  }

  /** Resolves true once no request is in flight, false at `withinMs`. */
  private idle(withinMs: number): Promise<boolean> {
    if (this.inFlight === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (ok: boolean) => {
        clearTimeout(timer);
        this.idleWaiters.delete(wake);
        resolve(ok);
      };
      const wake = () => done(true);
      const timer = setTimeout(() => done(false), Math.max(0, withinMs));
      this.idleWaiters.add(wake);
    });
  }
}

/**
 * What `main.ts` of every app does: on SIGTERM (or SIGINT) drain within `deadlineMs`, then exit.
 * A second signal exits at once.
 */
export function exitAfterDrainOnSignal(
  drain: ShutdownDrain,
  server: Server,
  deadlineMs: number,
  close: () => Promise<void>,
): void {
  const onSignal = (signal: NodeJS.Signals) => {
    if (drain.draining) process.exit(1);
    new Logger('Shutdown').log(`${signal} received`);
    void drain
      .run(server, deadlineMs, close)
      .catch((err: Error) => new Logger('Shutdown').error(`drain failed: ${err.message}`))
      // Spans and metrics still buffered are sent before the process goes; an unreachable collector gets 2 s.
      .then(() =>
        Promise.race([shutdownTelemetry(), new Promise<void>((r) => setTimeout(r, TELEMETRY_FLUSH_MS).unref())]),
      )
      .catch(() => undefined)
      .finally(() => process.exit(0));
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}

/** The close listener of every answer `drain` counts: an emitter calls it with the answer as `this`. */
function answerClosedListener(drain: ShutdownDrain): (this: ServerResponse) => void {
  return function (this: ServerResponse) {
    drain.answered(this);
  };
}
