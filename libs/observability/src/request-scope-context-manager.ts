import { ROOT_CONTEXT, type Context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { activeOtelContext, enterOtelContext, runWithOtelContext } from './log-context';

/**
 * The SDK's AsyncLocalStorage context manager, keeping the active OpenTelemetry context in the
 * request scope the log context already lives in (log-context.ts) instead of an AsyncLocalStorage of
 * its own: every enabled AsyncLocalStorage is copied onto every promise the process makes, so a
 * second one made every call dearer, sampled or not. Binding functions and event emitters is the
 * SDK's (it goes through `with`). Loaded by startTelemetry only.
 */
export class RequestScopeContextManager extends AsyncLocalStorageContextManager {
  override active(): Context {
    return activeOtelContext() ?? ROOT_CONTEXT;
  }

  override with<A extends unknown[], F extends (...args: A) => ReturnType<F>>(
    context: Context,
    fn: F,
    thisArg?: ThisParameterType<F>,
    ...args: A
  ): ReturnType<F> {
    return runWithOtelContext(context, thisArg == null ? fn : fn.bind(thisArg), ...args);
  }

  override attach(context: Context): { dispose(): void } {
    const restore = enterOtelContext(context);
    let disposed = false;
    return {
      dispose() {
        if (disposed) return;
        disposed = true;
        restore();
      },
    };
  }

  // The request scope is shared with the log context: it outlives the SDK.
  override disable(): this {
    return this;
  }
}
