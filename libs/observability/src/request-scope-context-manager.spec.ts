import { EventEmitter } from 'node:events';
import { ROOT_CONTEXT, context, createContextKey } from '@opentelemetry/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { currentLogContext, runWithLogContext } from './log-context';
import { RequestScopeContextManager } from './request-scope-context-manager';

const KEY = createContextKey('test');

describe('RequestScopeContextManager', () => {
  beforeAll(() => context.setGlobalContextManager(new RequestScopeContextManager()));
  afterAll(() => context.disable());

  it('should keep the log context inside a span context and the span context inside a log context when they nest', async () => {
    const ctx = ROOT_CONTEXT.setValue(KEY, 'span');
    const seen = await runWithLogContext({ requestId: 'r1' }, () =>
      context.with(ctx, async () => {
        await new Promise((resolve) => setImmediate(resolve));
        const inner = runWithLogContext({ requestId: 'r2' }, () => context.active().getValue(KEY));
        return { log: currentLogContext()?.requestId, otel: context.active().getValue(KEY), inner };
      }),
    );
    expect(seen).toEqual({ log: 'r1', otel: 'span', inner: 'span' });
    expect(context.active()).toBe(ROOT_CONTEXT);
    expect(currentLogContext()).toBeUndefined();
  });

  it('should run a bound listener in the bound context and the caller’s log context when the emitter fires', () => {
    const emitter = context.bind(ROOT_CONTEXT.setValue(KEY, 'bound'), new EventEmitter());
    let seen: unknown[] = [];
    emitter.on('x', () => (seen = [context.active().getValue(KEY), currentLogContext()?.requestId]));
    runWithLogContext({ requestId: 'r3' }, () => emitter.emit('x'));
    expect(seen).toEqual(['bound', 'r3']);
  });

  it('should restore the previous context when an attached one is disposed', () => {
    runWithLogContext({ requestId: 'r4' }, () => {
      const token = context.attach?.(ROOT_CONTEXT.setValue(KEY, 'attached'));
      expect(context.active().getValue(KEY)).toBe('attached');
      token?.dispose();
      expect(context.active().getValue(KEY)).toBeUndefined();
      expect(currentLogContext()?.requestId).toBe('r4');
    });
  });
});
