/**
 * Secret values in text the server cut before redacting it (docs/platform.md, "Secrets"): a
 * long line `read_file` shortened, the head and tail a long output keeps around its omission
 * marker, a background command's output read in parts, a stream that stops where its text goes
 * on, a preview. What a cut leaves of a value is hidden too. Values that overlap (one's end is
 * another's start) are hidden whole, in a text and in a stream. Checked with seeded random
 * values, texts and cuts.
 */
import { mkdtemp, realpath, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnyNotification } from '../../src/protocol/index.js';
import { LocalExecutor } from '../../src/executors/local/local-executor.js';
import { OutputCollector } from '../../src/executors/output-collector.js';
import { truncateMiddle } from '../../src/executors/output-truncation.js';
import { Workspace } from '../../src/executors/workspace.js';
import { PREVIEW_LENGTH } from '../../src/dao/conversation-listing.js';
import { StreamRedaction } from '../../src/platform/secrets/stream-redaction.js';
import type { SecretRedactor, StreamHeld } from '../../src/platform/secrets/secret-redactor.js';
import { createReadFileTool } from '../../src/tools/read-file.js';
import type { ToolContext } from '../../src/tools/tool.js';
import { redactorOf, seededRandom } from './redaction-helpers.js';

/** Letters no marker, status line or line number holds, so any of them shown is a leak. */
const SECRET_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';

function randomSecret(random: () => number, length = 8 + Math.floor(random() * 12)): string {
  return Array.from({ length }, () => SECRET_ALPHABET[Math.floor(random() * SECRET_ALPHABET.length)]).join('');
}

/** Every piece of a value (two characters or more) that `shown` holds. */
function leaked(shown: string, values: string[]): string[] {
  const found: string[] = [];
  for (const value of values) for (let start = 0; start + 2 <= value.length; start++) if (shown.includes(value.slice(start, start + 2))) found.push(value.slice(start, start + 2));
  return found;
}

describe('read_file: a line shortened inside a value', () => {
  let root: string;
  let context: ToolContext;
  beforeAll(async () => {
    root = await realpath(await mkdtemp(path.join(tmpdir(), 'cut-redaction-')));
    context = { workspace: new Workspace(new LocalExecutor({ name: 'local' }), root), signal: new AbortController().signal };
  });
  afterAll(async () => {
    await context.workspace.executor.close();
    await rm(root, { recursive: true, force: true });
  });

  it('hides the kept start of a value the 2000-character cut splits, at every split point', async () => {
    const random = seededRandom(20261210);
    const tool = createReadFileTool();
    for (let round = 0; round < 25; round++) {
      const secret = randomSecret(random);
      const redactor = redactorOf(secret);
      // The value straddles the cut: from 1 to length − 1 of its characters are kept.
      const kept = 1 + Math.floor(random() * (secret.length - 1));
      await writeFile(path.join(root, 'long.txt'), `${'.'.repeat(2000 - kept)}${secret}${'.'.repeat(3000)}\nnext ${secret} line\n`);
      const result = await tool.invoke({ path: 'long.txt' }, context);
      expect(result.output).toContain('[… line shortened:');
      const shown = redactor.redactText(result.output);
      expect(leaked(shown, [secret]), `secret ${secret}, ${kept} kept`).toEqual([]);
      expect(shown).toContain(`${'.'.repeat(2000 - kept)}*** [… line shortened: ${3000 + secret.length - kept} more characters]`);
      expect(shown).toContain('next *** line');
    }
  });
});

describe('head and tail around an omission marker', () => {
  it('hides what the cut leaves of a value on either side, for seeded random outputs and cutters', () => {
    const random = seededRandom(20261211);
    for (let round = 0; round < 200; round++) {
      const secrets = [randomSecret(random), randomSecret(random)];
      const redactor = redactorOf(...secrets);
      // One long line (cuts fall inside it) or many lines, with the values here and there.
      let text = '';
      const lines = random() < 0.5;
      for (let part = 0; part < 400; part++) {
        text += random() < 0.2 ? (secrets[Math.floor(random() * 2)] as string) : '.'.repeat(1 + Math.floor(random() * 9));
        if (lines && random() < 0.3) text += '\n';
      }
      const limit = 200 + Math.floor(random() * 800);
      const cut = random() < 0.5 ? truncateMiddle(text, limit).text : collected(text, limit, random);
      expect(cut).toContain('bytes omitted');
      const shown = redactor.redactText(`${cut}\n[exit code 0]`);
      if (leaked(shown, secrets).length > 0) expect(leaked(shown, secrets), `round ${round}: ${JSON.stringify(cut)}`).toEqual([]);
    }
  });

  it('leaves a head that ends a line and a tail that begins one as they are', () => {
    const redactor = redactorOf('ABCDEFGH', 'STUVWXYZ');
    // The head's last line ends with "ABC" (the start of a value) but is whole; the tail's first line begins with "XYZ".
    // Lines of 17 characters and a cap of 164 bytes (18 for the head, 18 for the tail) make both cuts fall at line breaks.
    const text = `........ keep ABC\n${'.'.repeat(2000)}\nXYZ keep ........\n`;
    const cut = truncateMiddle(text, 164).text;
    expect(cut.startsWith('........ keep ABC\n[… ')).toBe(true);
    expect(cut.endsWith('…]\nXYZ keep ........\n')).toBe(true);
    expect(redactor.redactText(cut)).toBe(cut);
  });
});

/** `text` passed through an executor's collector in random chunks, under a cap of `limit` bytes. */
function collected(text: string, limit: number, random: () => number): string {
  const collector = new OutputCollector(limit);
  for (let start = 0; start < text.length; ) {
    const end = Math.min(text.length, start + 1 + Math.floor(random() * 50));
    collector.add(text.slice(start, end));
    start = end;
  }
  return collector.result().output;
}

/** A `tool_call` item as the background command tools give it: the read text, then the status line. */
function commandItem(toolName: string, read: string, running: boolean): Record<string, unknown> {
  const status = running ? '[still running as command_id cmd_1; use write_stdin to send input or read new output, kill_command to stop it]' : '[exit code 0]';
  return {
    kind: 'tool_call',
    toolName,
    output: `${read}${read === '' || read.endsWith('\n') ? '' : '\n'}${status}`,
    structured: { commandId: 'cmd_1', running, exitCode: running ? null : 0 },
    details: { kind: 'command', command: 'watch', cwd: '/w', exitCode: running ? null : 0, signal: null, durationMs: 5, output: read },
  };
}

describe('a background command read in parts', () => {
  it('hides a value split between reads, in the items and in their streamed output, at every split point', () => {
    const random = seededRandom(20261212);
    for (let round = 0; round < 40; round++) {
      const secret = randomSecret(random);
      const redactor = redactorOf(secret);
      const output = `.. ${secret} ..\n`;
      const at = 3 + 1 + Math.floor(random() * (secret.length - 1));
      const reads = [output.slice(0, at), output.slice(at)];
      const items = [commandItem('exec_command', reads[0] as string, true), commandItem('write_stdin', reads[1] as string, false)];
      const shown = items.map((item) => redactor.redact(item));
      expect(leaked(JSON.stringify(shown), [secret]), `split at ${at}`).toEqual([]);
      // The status lines and the text around the value stay.
      expect((shown[0] as { output: string }).output).toMatch(/^\.\. \*\*\*\n\[still running as command_id cmd_1;/);
      expect((shown[1] as { details: { output: string } }).details.output).toBe('*** ..\n');
      // Streamed: each call's output is its own item's stream, cut into random deltas.
      const received = [0, 1].flatMap((index) => streamCall(redactor, `i${index}`, index === 0 ? 'exec_command' : 'write_stdin', reads[index] as string, random));
      expect(leaked(received.join(''), [secret]), `streamed, split at ${at}`).toEqual([]);
    }
  });

  it('keeps the whole first read of a command that ended', () => {
    const redactor = redactorOf('ABCDEFGH');
    expect(redactor.redact(commandItem('exec_command', 'HGF ABC\n', false))).toEqual(commandItem('exec_command', 'HGF ABC\n', false));
  });
});

/** The output deltas a client receives for one tool call whose output `text` streams in random deltas. */
function streamCall(redactor: SecretRedactor, itemId: string, toolName: string, text: string, random: () => number): string[] {
  const redaction = new StreamRedaction(redactor);
  const ids = { conversationId: 'c1', sessionId: 's1', turnId: 't1', itemId, kind: 'tool_call', seq: 1 };
  const events: AnyNotification[] = [{ method: 'item/started', params: { ...ids, partial: { toolName } } } as AnyNotification];
  for (let start = 0; start < text.length; ) {
    const end = Math.min(text.length, start + 1 + Math.floor(random() * 6));
    events.push({ method: 'item/delta', params: { ...ids, delta: { output: text.slice(start, end) } } } as AnyNotification);
    start = end;
  }
  events.push({ method: 'item/completed', params: { conversationId: 'c1', sessionId: 's1', seq: 2, item: { id: itemId } } } as unknown as AnyNotification);
  return events
    .flatMap((event) => redaction.redact(event))
    .map((event) => (event.method === 'item/delta' ? (event.params.delta.output ?? '') : ''));
}

describe('overlapping values', () => {
  it('hides "abcdef" and "defghi" in "abcdefghi" whole, in a text and in every stream of it', () => {
    const redactor = redactorOf('abcdef', 'defghi');
    expect(redactor.redactText('x abcdefghi y')).toBe('x *** y');
    const text = 'x abcdefghi y';
    for (let first = 0; first <= text.length; first++) {
      for (let second = first; second <= text.length; second++) {
        expect(streamed(redactor, [text.slice(0, first), text.slice(first, second), text.slice(second)])).toBe('x *** y');
      }
    }
  });

  it('hides every character of chains of seeded random overlapping values, however the stream is cut', () => {
    const random = seededRandom(20261213);
    for (let round = 0; round < 150; round++) {
      // Values that share their ends: each one begins with the end of the one before.
      const values = [randomSecret(random, 6 + Math.floor(random() * 6))];
      for (let count = 1 + Math.floor(random() * 3); count > 0; count--) {
        const previous = values.at(-1) as string;
        const shared = 1 + Math.floor(random() * (previous.length - 2));
        values.push(previous.slice(-shared) + randomSecret(random, 3 + Math.floor(random() * 6)));
      }
      const redactor = redactorOf(...values);
      // Texts of values overlapping on their shared ends, between dots.
      let text = '';
      for (let part = 0; part < 6; part++) {
        if (random() < 0.3) text += '.';
        const index = Math.floor(random() * (values.length - 1));
        const first = values[index] as string;
        const next = values[index + 1] as string;
        const shared = [...Array(Math.min(first.length, next.length)).keys()].reverse().find((length) => length > 0 && first.endsWith(next.slice(0, length))) ?? 0;
        text += random() < 0.5 ? first + next.slice(shared) : first;
      }
      const whole = redactor.redactText(text);
      expect(whole.replace(/[.*]/g, ''), `values ${JSON.stringify(values)}, text ${text}`).toBe('');
      for (let chunking = 0; chunking < 6; chunking++) {
        const cuts = [...new Set(Array.from({ length: Math.floor(random() * 5) }, () => Math.floor(random() * (text.length + 1))))].sort((a, b) => a - b);
        const chunks = [0, ...cuts].map((start, index) => text.slice(start, [...cuts, text.length][index]));
        expect(streamed(redactor, chunks), `chunks ${JSON.stringify(chunks)}`).toBe(whole);
      }
    }
  });
});

/** What a client assembles from `chunks` streamed through the redactor. */
function streamed(redactor: SecretRedactor, chunks: string[]): string {
  let held: StreamHeld | undefined;
  let out = '';
  for (const chunk of chunks) {
    const result = redactor.redactStreamChunk(held, chunk);
    held = result.held;
    out += result.text;
  }
  return out + redactor.endStream(held);
}

describe('a stream that stops where its text goes on', () => {
  it('hides what a tool output stream holds at its end; an answer keeps it', () => {
    const redactor = redactorOf('ABCDEFGHIJ');
    const redaction = new StreamRedaction(redactor);
    const ids = { conversationId: 'c1', sessionId: 's1', turnId: 't1', seq: 1 };
    const sent = [
      { method: 'item/delta', params: { ...ids, itemId: 'tool', kind: 'tool_call', delta: { output: 'out ABCDE' } } },
      { method: 'item/delta', params: { ...ids, itemId: 'answer', kind: 'assistant_message', delta: { text: 'say ABCDE' } } },
      { method: 'turn/completed', params: { conversationId: 'c1', turn: { id: 't1' }, seq: 2 } },
    ].flatMap((event) => redaction.redact(event as unknown as AnyNotification));
    const texts = sent.map((event) => (event.method === 'item/delta' ? JSON.stringify(event.params.delta) : ''));
    expect(texts.filter((text) => text.includes('output')).join('')).not.toContain('ABC');
    expect(texts).toContain('{"output":"***"}');
    expect(texts).toContain('{"text":"ABCDE"}');
  });
});

describe('a preview', () => {
  it('hides the start of a value its cut at PREVIEW_LENGTH characters leaves, and only then', () => {
    const redactor = redactorOf('ABCDEFGHIJ');
    const preview = `${'.'.repeat(PREVIEW_LENGTH - 4)}ABCD`;
    expect(redactor.redact({ id: 'c1', preview })).toEqual({ id: 'c1', preview: `${'.'.repeat(PREVIEW_LENGTH - 4)}***` });
    expect(redactor.redact({ id: 'c1', preview: 'short ABCD' })).toEqual({ id: 'c1', preview: 'short ABCD' });
  });
});
