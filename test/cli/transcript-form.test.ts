/**
 * `openvaala conversations show`'s transcript: turns are set apart by a blank line, and an
 * interrupted turn says so once (its interruption line, with the reason), not once more under
 * the answer it cut short.
 */
import { describe, expect, it } from 'vitest';
import { formatTranscript } from '../../src/cli/conversations.js';
import type { Item, Turn } from '../../src/protocol/index.js';

const base = (id: string, turnId: string, status: Item['status'] = 'completed') => ({ id, sessionId: 'sess_root', turnId, createdAt: 1, completedAt: 2, status });
const ask = (id: string, turnId: string, text: string): Item => ({ ...base(id, turnId), kind: 'user_message', content: [{ type: 'text', text }], mode: 'input' });
const answer = (id: string, turnId: string, text: string, status: Item['status'] = 'completed'): Item => ({ ...base(id, turnId, status), kind: 'assistant_message', text, model: 'mock/model' });

describe('conversations show: the transcript', () => {
  it('sets each turn apart with one blank line, and none before the first or after the last', () => {
    const text = formatTranscript([ask('u1', 't1', 'first'), answer('a1', 't1', 'one'), ask('u2', 't2', 'second'), answer('a2', 't2', 'two')]);
    expect(text).toBe('› first\none\n\n› second\ntwo\n');
  });

  it('puts the blank line after a turn end warning, which stays next to the answer it is about', () => {
    const cut: Turn = { id: 't1', sessionId: 'sess_root', conversationId: 'conv_1', status: 'completed', steps: 1, usage: { inputTokens: 10, outputTokens: 20, totalTokens: 30 }, stopReason: 'max_tokens', startedAt: 1, completedAt: 2 };
    const text = formatTranscript([ask('u1', 't1', 'first'), answer('a1', 't1', 'The report starts'), ask('u2', 't2', 'second')], new Map([['t1', cut]]));
    const lines = text.split('\n');
    expect(lines[2]).toMatch(/^warning: /);
    expect(lines[3]).toBe('');
    expect(lines[4]).toBe('› second');
  });

  it('says an interruption once: the answer it cut short carries no mark of its own', () => {
    const interruption: Item = { ...base('i1', 't1'), kind: 'interruption', reason: 'user' };
    const text = formatTranscript([ask('u1', 't1', 'go'), answer('a1', 't1', 'stopp', 'interrupted'), interruption, ask('u2', 't2', 'again'), answer('a2', 't2', 'done')]);
    expect(text).toBe('› go\nstopp\n■ interrupted (user)\n\n› again\ndone\n');
    expect(text.match(/interrupted/g)).toHaveLength(1);
  });

  it('keeps the mark under an answer cut short in a turn that records no interruption, and under a cut-off answer', () => {
    const text = formatTranscript([answer('a1', 't1', 'stopp', 'interrupted'), answer('a2', 't2', 'half', 'failed'), answer('a3', 't2', 'whole')]);
    expect(text).toBe('stopp\n  ■ interrupted\n\nhalf\n  ■ cut off\nwhole\n');
  });

  it('keeps the outcome line of a tool call the interruption stopped', () => {
    const call: Item = { ...base('c1', 't1', 'interrupted'), kind: 'tool_call', callId: 'call_1', toolName: 'exec_command', arguments: { command: 'sleep 100' }, output: '', isError: false, durationMs: 5 };
    const interruption: Item = { ...base('i1', 't1'), kind: 'interruption', reason: 'user' };
    expect(formatTranscript([call, interruption])).toBe('▸ exec_command sleep 100\n  ■ interrupted\n■ interrupted (user)\n');
    const killed: Item = { ...call, exitCode: null, details: { kind: 'command', command: 'sleep 100', cwd: '/w', exitCode: null, signal: 'SIGTERM', durationMs: 5, output: '' } };
    expect(formatTranscript([killed])).toBe('▸ exec_command sleep 100\n  ■ interrupted: killed by SIGTERM\n');
  });
});
