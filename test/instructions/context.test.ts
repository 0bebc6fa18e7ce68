/**
 * How instructions and refused prompts enter the model context: AGENTS.md and loaded skills
 * outlive a compaction (a summary must not paraphrase them away); a prompt refused by a hook
 * stays out of every request.
 */
import { describe, expect, it } from 'vitest';
import type { Item } from '../../src/protocol/index.js';
import { buildModelMessages } from '../../src/runtime/context-builder.js';

const base = (id: string) => ({ id, sessionId: 's', turnId: 't', createdAt: 1, completedAt: 2, status: 'completed' as const });
const instruction = (id: string, source: 'agents_md' | 'skill' | 'agent', name: string, body: string): Item => ({ ...base(id), kind: 'instruction', source, name, body });
const user = (id: string, text: string, status: 'completed' | 'failed' = 'completed'): Item => ({ ...base(id), status, kind: 'user_message', content: [{ type: 'text', text }], mode: 'input' });

describe('instructions in the model context', () => {
  it('keeps AGENTS.md and loaded skills across a compaction, but not hook notes or skill problem reports', () => {
    const messages = buildModelMessages([
      instruction('1', 'agents_md', '/repo/AGENTS.md', 'AGENTS-BODY'),
      instruction('2', 'skill', 'skill-problems', 'PROBLEMS'),
      user('3', 'the task'),
      instruction('4', 'skill', 'deploy', 'SKILL-BODY'),
      instruction('5', 'agent', 'hook:stop', 'HOOK-NOTE'),
      { ...base('6'), kind: 'context_summary', text: 'SUMMARY', lastItemId: '5' },
    ]);
    const text = JSON.stringify(messages);
    expect(text).toContain('AGENTS-BODY');
    expect(text).toContain('SKILL-BODY');
    expect(text).not.toContain('PROBLEMS');
    expect(text).not.toContain('HOOK-NOTE');
    expect(text.indexOf('AGENTS-BODY')).toBeLessThan(text.indexOf('SUMMARY'));
    expect(text).toContain('the task');
  });

  it('leaves a refused prompt out, also as the request kept after a compaction', () => {
    const items = [user('1', 'accepted task'), user('2', 'REFUSED', 'failed'), { ...base('3'), kind: 'context_summary' as const, text: 'S', lastItemId: '2' }];
    const text = JSON.stringify(buildModelMessages(items));
    expect(text).not.toContain('REFUSED');
    expect(JSON.stringify(buildModelMessages(items.slice(0, 2)))).not.toContain('REFUSED');
    expect(text).toContain('accepted task');
  });
});
