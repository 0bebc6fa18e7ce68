/**
 * The context meter decides when to compact, so it must measure what the model reads, not
 * what is stored: a stored command result holds its whole output twice (in the item and in
 * its details) while the model reads it cut to the cap, and an image travels as bytes that the
 * provider reads as about a thousand tokens. Measured as stored, one long build log or one
 * screenshot set off a compaction on a window that had room for both.
 */
import { describe, expect, it } from 'vitest';
import type { Item } from '../../src/protocol/index.js';
import { buildModelMessages } from '../../src/runtime/context-builder.js';
import { ContextMeter, estimateMessageTokens, IMAGE_TOKENS } from '../../src/runtime/compaction.js';

const SESSION = 'sess_01jcontextestimate00000';
const base = (id: string) => ({ id, sessionId: SESSION, turnId: 'turn_01jcontextestimate0000', createdAt: 1, completedAt: 2, status: 'completed' as const });

/** A stored command result as the runtime records it: the whole output, and again in the command details. */
function commandResult(output: string): Item {
  return {
    ...base('item_01jcommand0000000000000'),
    kind: 'tool_call',
    callId: 'call_1',
    toolName: 'exec_command',
    arguments: { command: 'seq 1 40000' },
    output,
    isError: false,
    exitCode: 0,
    durationMs: 69,
    details: { kind: 'command', command: 'seq 1 40000', cwd: '/home/user/project', exitCode: 0, output },
  };
}

function userMessageWithAttachment(attachmentId: string): Item {
  return { ...base('item_01juser00000000000000000'), kind: 'user_message', mode: 'input', content: [{ type: 'text', text: 'what is on this screenshot?' }, { type: 'file', path: 'screen.png', name: 'screen.png', attachmentId }] } as Item;
}

/** A PNG of `size` bytes: its signature, then filler (the estimate never decodes it). */
function png(size: number): Uint8Array {
  const bytes = new Uint8Array(size).fill(7);
  bytes.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return bytes;
}

const CAP_BYTES = 64 * 1024;

describe('the context meter measures what the model reads', () => {
  it('counts a long command result at its cap, not twice its stored length', () => {
    const meter = new ContextMeter();
    const user: Item = { ...base('item_01juser00000000000000000'), kind: 'user_message', mode: 'input', content: [{ type: 'text', text: 'count' }] } as Item;
    meter.report({ inputTokens: 30_000, outputTokens: 20, totalTokens: 30_020 }, 1);
    const output = Array.from({ length: 40_000 }, (_, index) => `${index + 1}\n`).join('');
    expect(output.length).toBeGreaterThan(200_000);
    const items = [user, commandResult(output)];
    const estimate = meter.estimate(items, 'system', (list) => buildModelMessages(list, { toolOutputLimitBytes: CAP_BYTES }));
    const added = estimate - 30_020;
    // The model reads at most 64 KiB of it: about 16,000 tokens (more as JSON, whose escaped
    // line breaks count twice), where the stored item made 134,000.
    expect(added).toBeGreaterThan(CAP_BYTES / 4 - 1_000);
    expect(added).toBeLessThan((CAP_BYTES / 4) * 1.5);
  });

  it('counts an attached image as a fixed number of tokens, whatever its size in bytes', () => {
    const meter = new ContextMeter();
    const attachment = png(500_000);
    const toMessages = (list: Item[]) => buildModelMessages(list, { readAttachment: (id) => (id === 'att_screen' ? attachment : undefined) });
    const estimate = meter.estimate([userMessageWithAttachment('att_screen')], 'system prompt', toMessages);
    expect(estimate).toBeGreaterThanOrEqual(IMAGE_TOKENS);
    expect(estimate).toBeLessThan(IMAGE_TOKENS + 200);
  });

  it('adds nothing for no new items and counts file parts by their bytes', () => {
    const meter = new ContextMeter();
    meter.report({ inputTokens: 1_000, outputTokens: 0, totalTokens: 1_000 }, 3);
    expect(meter.estimate([], 'system', () => [])).toBe(1_000);
    const pdf = new Uint8Array(40_000);
    expect(estimateMessageTokens([{ role: 'user', content: [{ type: 'file', data: pdf, mediaType: 'application/pdf' }] }])).toBeGreaterThanOrEqual(10_000);
    expect(estimateMessageTokens([{ role: 'user', content: [{ type: 'file', data: pdf, mediaType: 'application/pdf' }] }])).toBeLessThan(10_100);
    // A base64 string counts as the bytes it carries.
    const base64 = Buffer.from(pdf).toString('base64');
    expect(estimateMessageTokens([{ role: 'user', content: [{ type: 'file', data: base64, mediaType: 'application/pdf' }] }])).toBeLessThan(10_100);
  });
});
