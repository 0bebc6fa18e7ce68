import { describe, expect, it } from 'vitest';
import type { Item } from '../../src/protocol/index.js';
import { buildModelMessages } from '../../src/runtime/context-builder.js';

const base = (id: string) => ({ id, sessionId: 's', turnId: 't', createdAt: 1, completedAt: 2, status: 'completed' as const });
const user = (id: string, text: string): Item => ({ ...base(id), kind: 'user_message', content: [{ type: 'text', text }], mode: 'input' });
const assistant = (id: string, text: string): Item => ({ ...base(id), kind: 'assistant_message', text, model: 'm/x' });
const call = (id: string, callId: string, isError = false): Item => ({ ...base(id), kind: 'tool_call', callId, toolName: 'exec_command', arguments: { command: 'ls' }, output: `out ${callId}`, isError, durationMs: 1 });

describe('buildModelMessages', () => {
  it('pairs every tool call with its result, in request order, after the assistant text of the step', () => {
    const messages = buildModelMessages([user('1', 'hi'), assistant('2', 'looking'), call('3', 'a'), call('4', 'b'), assistant('5', 'done')]);
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    const step = messages[1] as { content: { type: string; toolCallId?: string }[] };
    expect(step.content.map((part) => part.type)).toEqual(['text', 'tool-call', 'tool-call']);
    const results = messages[2] as { content: { toolCallId: string; output: { type: string; value: string } }[] };
    expect(results.content.map((part) => part.toolCallId)).toEqual(['a', 'b']);
    expect(results.content[0]?.output).toEqual({ type: 'text', value: 'out a' });
  });

  it('sends failed tool results as error text and leaves out items the model does not need', () => {
    const failure: Item = { ...base('9'), kind: 'model_error', status: 'failed', provider: 'p', model: 'p/m', httpStatus: 500, message: 'x', retries: 0 };
    const messages = buildModelMessages([user('1', 'hi'), call('2', 'a', true), failure, user('3', 'again')]);
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'user']);
    expect((messages[2] as { content: { output: { type: string } }[] }).content[0]?.output.type).toBe('error-text');
  });

  it('starts a new assistant message for text that follows tool results', () => {
    const messages = buildModelMessages([user('1', 'go'), call('2', 'a'), assistant('3', 'next'), call('4', 'b')]);
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'tool']);
  });

  it('leaves out answers and reasoning the provider cut off, and reasoning an interruption cut short; keeps an interrupted answer', () => {
    const cut = (id: string, kind: 'assistant_message' | 'reasoning', status: 'failed' | 'interrupted', text: string): Item =>
      kind === 'assistant_message' ? { ...base(id), status, kind, text, model: 'm/x' } : { ...base(id), status, kind, summary: text, summaryParts: [text], model: 'm/x' };
    const messages = buildModelMessages(
      [
        user('1', 'hi'),
        cut('2', 'reasoning', 'failed', 'CUT-REASONING'),
        cut('3', 'assistant_message', 'failed', 'CUT-TEXT'),
        assistant('4', 'WHOLE-TEXT'),
        user('5', 'more'),
        cut('6', 'reasoning', 'interrupted', 'STOPPED-REASONING'),
        cut('7', 'assistant_message', 'interrupted', 'STOPPED-TEXT'),
      ],
      { model: 'm/x' },
    );
    const text = JSON.stringify(messages);
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(text).toContain('WHOLE-TEXT');
    expect(text).toContain('STOPPED-TEXT');
    expect(text).not.toContain('CUT-TEXT');
    expect(text).not.toContain('CUT-REASONING');
    expect(text).not.toContain('STOPPED-REASONING');
  });
});
