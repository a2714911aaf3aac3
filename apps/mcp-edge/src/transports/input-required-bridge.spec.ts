import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { HeldCall, HeldCalls, inputResponsesOf } from './input-required-bridge';
import { StatelessRevisionError } from './stateless-revision';

const elicit = { message: 'Name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } };

describe('input-required bridge', () => {
  it('should hold the upstream request, answer a round with it, and resolve it with the agent response', async () => {
    const calls = new HeldCalls(randomBytes(32));
    const call = new HeldCall('key-1', { elicitation: {} }, new AbortController());
    const release = calls.hold(call);
    const asked = call.ask(
      'elicitation/create',
      { ...elicit, _meta: { 'tollgate/inputKey': 'user_name' } },
      new AbortController().signal,
    );
    const round = await call.nextRound((c) => calls.sign(c));
    expect(round).toMatchObject({
      kind: 'input_required',
      inputRequests: { user_name: { method: 'elicitation/create', params: elicit } },
    });
    if (round.kind !== 'input_required') throw new Error('unreachable');

    const resumed = calls.resume('key-1', round.requestState);
    resumed.takeResponses({ user_name: { action: 'accept', content: { name: 'Ada' } } });
    await expect(asked).resolves.toEqual({ action: 'accept', content: { name: 'Ada' } });
    call.finish({ result: { content: [] } });
    await expect(call.nextRound((c) => calls.sign(c))).resolves.toEqual({
      kind: 'done',
      answer: { result: { content: [] } },
    });
    release();
  });

  it('should refuse a tampered, foreign or stale requestState', async () => {
    const calls = new HeldCalls(randomBytes(32));
    const call = new HeldCall('key-1', { sampling: {} }, new AbortController());
    calls.hold(call);
    void call.ask('sampling/createMessage', { messages: [], maxTokens: 5 }, new AbortController().signal);
    const round = await call.nextRound((c) => calls.sign(c));
    if (round.kind !== 'input_required') throw new Error('unreachable');
    expect(() => calls.resume('key-1', `${round.requestState}x`)).toThrow(StatelessRevisionError);
    expect(() => calls.resume('key-2', round.requestState)).toThrow('integrity');
    call.round++;
    expect(() => calls.resume('key-1', round.requestState)).toThrow('no call waiting');
  });

  it('should accept a requestState another edge signed with the shared key, and refuse one signed with another key', async () => {
    const key = randomBytes(32);
    const here = new HeldCalls(key);
    const call = new HeldCall('key-1', { sampling: {} }, new AbortController());
    here.hold(call);
    void call.ask('sampling/createMessage', { messages: [], maxTokens: 5 }, new AbortController().signal);
    const round = await call.nextRound((c) => here.sign(c));
    if (round.kind !== 'input_required') throw new Error('unreachable');
    // Another edge of the same deployment: the state is genuine, the call just is not held there.
    expect(() => new HeldCalls(Buffer.from(key)).resume('key-1', round.requestState)).toThrow('waits on another edge');
    expect(() => new HeldCalls(randomBytes(32)).resume('key-1', round.requestState)).toThrow('integrity');
    expect(here.resume('key-1', round.requestState)).toBe(call);
  });

  it('should refuse a request for a capability the agent did not declare, and record it', async () => {
    const call = new HeldCall('key-1', { sampling: {} }, new AbortController());
    await expect(call.ask('roots/list', undefined, new AbortController().signal)).rejects.toMatchObject({
      code: -32601,
      message: expect.stringContaining('roots'),
    });
    expect(call.refused).toEqual({ roots: {} });
  });

  it('should answer at once a request the agent already gave the input for', async () => {
    const call = new HeldCall('key-1', { elicitation: {} }, new AbortController(), {
      user_name: { action: 'decline' },
    });
    await expect(
      call.ask(
        'elicitation/create',
        { ...elicit, _meta: { 'tollgate/inputKey': 'user_name' } },
        new AbortController().signal,
      ),
    ).resolves.toEqual({ action: 'decline' });
  });

  it('should validate inputResponses', () => {
    expect(inputResponsesOf({})).toBeUndefined();
    expect(inputResponsesOf({ inputResponses: { a: {} } })).toEqual({ a: {} });
    expect(() => inputResponsesOf({ inputResponses: 3 })).toThrow('must be an object');
    expect(() => inputResponsesOf({ inputResponses: { a: null } })).toThrow('inputResponses.a');
  });
});
