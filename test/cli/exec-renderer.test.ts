/**
 * exec's human renderer fed events by hand: text that is not the answer of exec's own session
 * (a compaction summary, a subagent's answer) never streams as the answer, and hook runs read
 * as one line when they failed or changed something.
 */
import { describe, expect, it } from 'vitest';
import { formatItem, HumanRenderer } from '../../src/cli/exec-output.js';
import type { AnyNotification, Item } from '../../src/protocol/index.js';
import { capturedStreams } from './exec-harness.js';

const ROOT = 'sess_root';
const CHILD = 'sess_child';

const started = (itemId: string, kind: string, sessionId = ROOT, partial: Record<string, unknown> = {}) => ({ method: 'item/started', params: { conversationId: 'c', sessionId, turnId: 't', itemId, kind, seq: 1, partial } });
const delta = (itemId: string, kind: string, value: Record<string, string>, sessionId = ROOT) => ({ method: 'item/delta', params: { conversationId: 'c', sessionId, turnId: 't', itemId, kind, seq: 1, delta: value } });
const base = (id: string, sessionId = ROOT) => ({ id, sessionId, turnId: 't', createdAt: 1, completedAt: 2, status: 'completed' as const });
const completed = (item: Item) => ({ method: 'item/completed', params: { conversationId: 'c', sessionId: item.sessionId, seq: 2, item } });

/** Renders `events` as exec's own session `sessionId` (null: no session given). */
function render(events: object[], sessionId: string | null = ROOT): { stdout: string; stderr: string } {
  const output = capturedStreams();
  const renderer = new HumanRenderer(output.streams, sessionId === null ? {} : { sessionId });
  for (const event of events) renderer.render(event as AnyNotification);
  renderer.endLine();
  return { stdout: output.stdout(), stderr: output.stderr() };
}

describe('exec renderer: what reads as the answer', () => {
  it('does not stream a compaction summary; says it in one line with its size', () => {
    const summary = 'The user asked for X. '.repeat(20).trim();
    const { stdout } = render([
      started('s', 'context_summary'),
      delta('s', 'context_summary', { text: summary.slice(0, 50) }),
      delta('s', 'context_summary', { text: summary.slice(50) }),
      completed({ ...base('s'), kind: 'context_summary', text: summary, lastItemId: 'x' }),
      started('a', 'assistant_message'),
      delta('a', 'assistant_message', { text: 'The answer.' }),
      completed({ ...base('a'), kind: 'assistant_message', text: 'The answer.', model: 'mock/mock-model' }),
    ]);
    expect(stdout).toBe(`⋯ earlier context compacted into a summary (${summary.length} characters)\nThe answer.\n`);
  });

  it("does not stream a subagent's answer as exec's own; shows it as a labelled line", () => {
    const { stdout } = render([
      started('a', 'assistant_message'),
      delta('a', 'assistant_message', { text: 'Asking a helper. ' }),
      started('c', 'assistant_message', CHILD),
      delta('c', 'assistant_message', { text: 'CHILD-TEXT line one\nline two' }, CHILD),
      completed({ ...base('c', CHILD), kind: 'assistant_message', text: 'CHILD-TEXT line one\nline two', model: 'mock/mock-model' }),
      delta('a', 'assistant_message', { text: 'Done.' }),
      completed({ ...base('a'), kind: 'assistant_message', text: 'Asking a helper. Done.', model: 'mock/mock-model' }),
    ]);
    expect(stdout).toBe(`Asking a helper. \nsubagent ${CHILD}: CHILD-TEXT line one …\nDone.\n`);
  });

  it('still streams reasoning of its own session, marked as reasoning', () => {
    const { stdout } = render([
      started('r', 'reasoning'),
      delta('r', 'reasoning', { reasoning: 'thinking' }),
      completed({ ...base('r'), kind: 'reasoning', summary: 'thinking' }),
      started('a', 'assistant_message'),
      delta('a', 'assistant_message', { text: 'answer' }),
      completed({ ...base('a'), kind: 'assistant_message', text: 'answer', model: 'm' }),
    ]);
    expect(stdout).toBe('∴ thinking\nanswer\n');
  });

  it("names a subagent's model error, and counts only exec's own as said", () => {
    const output = capturedStreams();
    const renderer = new HumanRenderer(output.streams, { sessionId: ROOT });
    const error = (sessionId: string, message: string): Item => ({ ...base(`e-${sessionId}`, sessionId), status: 'failed', kind: 'model_error', provider: 'mock', model: 'mock/mock-model', httpStatus: 500, message, retries: 0 });
    renderer.render(completed(error(CHILD, 'child failed')) as AnyNotification);
    renderer.render(completed(error(ROOT, 'root failed')) as AnyNotification);
    expect(output.stderr()).toBe(`subagent ${CHILD}: error: model mock/mock-model (HTTP 500): child failed\nerror: model mock/mock-model (HTTP 500): root failed\n`);
    expect(renderer.hasShownError('root failed')).toBe(true);
    expect(renderer.hasShownError('child failed')).toBe(false);
  });

  it('streams every session when not told which is its own', () => {
    const { stdout } = render([started('c', 'assistant_message', CHILD), delta('c', 'assistant_message', { text: 'child' }, CHILD)], null);
    expect(stdout).toBe('child\n');
  });
});

describe('exec renderer: an answer cut off and retried', () => {
  it('says on stderr that the streamed answer and reasoning were cut off, then streams the retried answer', () => {
    const retrying = { method: 'turn/retrying', params: { conversationId: 'c', sessionId: ROOT, turnId: 't', attempt: 1, maxRetries: 4, delayMs: 500, httpStatus: null, message: 'the connection to the provider dropped mid-answer' } };
    const { stdout, stderr } = render([
      started('r1', 'reasoning'),
      delta('r1', 'reasoning', { reasoning: 'half a thought' }),
      started('a1', 'assistant_message'),
      delta('a1', 'assistant_message', { text: 'The answer is' }),
      completed({ ...base('r1'), status: 'failed', kind: 'reasoning', summary: 'half a thought' }),
      completed({ ...base('a1'), status: 'failed', kind: 'assistant_message', text: 'The answer is', model: 'm' }),
      retrying,
      started('a2', 'assistant_message'),
      delta('a2', 'assistant_message', { text: 'The answer is 42.' }),
      completed({ ...base('a2'), kind: 'assistant_message', text: 'The answer is 42.', model: 'm' }),
    ]);
    expect(stdout).toBe('∴ half a thought\nThe answer is\nThe answer is 42.\n');
    expect(stderr).toBe('✗ reasoning cut off\n✗ answer cut off\nretrying in 500 ms: the connection to the provider dropped mid-answer (retry 1 of 4)\n');
  });

  it('marks a cut-off or interrupted answer and reasoning in the transcript form (conversations show)', () => {
    expect(formatItem({ ...base('a'), status: 'failed', kind: 'assistant_message', text: 'The answer is', model: 'm' })).toBe('The answer is\n  ■ cut off');
    expect(formatItem({ ...base('r'), status: 'failed', kind: 'reasoning', summary: 'half' })).toBe('∴ half\n  ■ cut off');
    expect(formatItem({ ...base('b'), status: 'interrupted', kind: 'assistant_message', text: 'stopp', model: 'm' })).toBe('stopp\n  ■ interrupted');
    expect(formatItem({ ...base('c'), kind: 'assistant_message', text: 'whole', model: 'm' })).toBe('whole');
  });

  it('marks nothing for a whole or an interrupted answer', () => {
    const { stderr } = render([
      started('a', 'assistant_message'),
      delta('a', 'assistant_message', { text: 'whole' }),
      completed({ ...base('a'), kind: 'assistant_message', text: 'whole', model: 'm' }),
      started('b', 'assistant_message'),
      delta('b', 'assistant_message', { text: 'stopp' }),
      completed({ ...base('b'), status: 'interrupted', kind: 'assistant_message', text: 'stopp', model: 'm' }),
    ]);
    expect(stderr).toBe('');
  });
});

describe('exec renderer: hook runs', () => {
  const hookRun = (decision: string, output = '', event = 'pre_tool_use', status: 'completed' | 'failed' = 'completed'): Item => ({ ...base(`h-${decision}`), status, kind: 'hook_run', event, command: '/hooks/check.sh', exitCode: 0, output, decision });

  it('prints nothing for a run that changed nothing', () => {
    expect(render([completed(hookRun('continue', 'some plain output'))])).toEqual({ stdout: '', stderr: '' });
  });

  it('says what a hook decided', () => {
    const { stdout } = render([
      completed(hookRun('block', '', 'user_prompt_submit')),
      completed(hookRun('deny')),
      completed(hookRun('allow')),
      completed(hookRun('ask')),
      completed(hookRun('block', '', 'stop')),
    ]);
    expect(stdout.split('\n')).toEqual([
      'hook user_prompt_submit "/hooks/check.sh": refused the prompt',
      '  hook pre_tool_use "/hooks/check.sh": denied the call',
      '  hook pre_tool_use "/hooks/check.sh": allowed the call without asking',
      '  hook pre_tool_use "/hooks/check.sh": asked for approval',
      'hook stop "/hooks/check.sh": made the turn go on',
      '',
    ]);
  });

  it('warns on stderr about a hook that failed', () => {
    const { stdout, stderr } = render([completed(hookRun('error', '[stderr]\nno such file\n[exit code 127; not blocking]', 'post_tool_use', 'failed'))]);
    expect(stdout).toBe('');
    expect(stderr).toBe('warning: hook post_tool_use "/hooks/check.sh": exit code 127; not blocking (stderr: no such file)\n');
  });

  it('names the rewritten call when it is the only one of its session running, and its closing line names what ran', () => {
    const { stdout } = render([
      started('t', 'tool_call', ROOT, { toolName: 'exec_command', arguments: { command: 'echo asked' } }),
      completed(hookRun('continue', '{"updatedArguments":{"command":"echo ran"}}')),
      delta('t', 'tool_call', { output: 'ran\n' }),
      completed({ ...base('t'), kind: 'tool_call', callId: 'c1', toolName: 'exec_command', arguments: { command: 'echo ran' }, output: 'ran\n', isError: false, exitCode: 0, durationMs: 3 }),
    ]);
    expect(stdout).toBe('▸ exec_command echo asked\n  hook pre_tool_use "/hooks/check.sh": rewrote the call: echo ran\n  │ ran\n  ✓ exec_command echo ran exit 0 (3 ms)\n');
  });

  it('says a call was rewritten when it ends, when no hook line could name it', () => {
    const { stdout } = render([
      started('t', 'tool_call', ROOT, { toolName: 'exec_command', arguments: { command: 'echo asked' } }),
      completed({ ...base('t'), kind: 'tool_call', callId: 'c1', toolName: 'exec_command', arguments: { command: 'echo ran' }, output: 'ran\n', isError: false, exitCode: 0, durationMs: 3 }),
    ]);
    expect(stdout).toBe('▸ exec_command echo asked\n  ↻ rewritten by a hook: echo ran\n  │ ran\n  ✓ exec_command echo ran exit 0 (3 ms)\n');
  });
});
