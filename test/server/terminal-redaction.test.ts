/**
 * A terminal's output is redacted as one stream: a secret value the program prints in two
 * writes (so in two output chunks) never reaches the client, and `seq` stays contiguous.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { LocalExecutor } from '../../src/executors/local/local-executor.js';
import { SecretRedactor } from '../../src/platform/secrets/secret-redactor.js';
import { textStreamRedaction } from '../../src/platform/secrets/stream-redaction.js';
import type { NotificationParams } from '../../src/protocol/index.js';
import { ConnectionTerminals } from '../../src/server/terminals.js';

const SECRET = 'tok_AB12CD34EF56';
let directory: string | undefined;
afterEach(() => {
  if (directory) rmSync(directory, { recursive: true, force: true });
  directory = undefined;
});

/** Runs `command` in a terminal and returns every `terminal/output` it sent, up to its exit. */
async function runTerminal(command: string, redactor: SecretRedactor | undefined): Promise<Array<NotificationParams<'terminal/output'>>> {
  directory = mkdtempSync(path.join(tmpdir(), 'terminal-redaction-'));
  const sent: Array<NotificationParams<'terminal/output'>> = [];
  const go = path.join(directory, 'go');
  let exited!: () => void;
  const done = new Promise<void>((resolve) => (exited = resolve));
  const terminals = new ConnectionTerminals(
    (params) => {
      sent.push(params);
      // SPLIT_PRINT waits for this file: it goes on once its first write has been sent.
      if (params.data?.includes('before') && !existsSync(go)) writeFileSync(go, '');
      if (params.exited) exited();
    },
    () => undefined,
    undefined,
    redactor ? () => textStreamRedaction(redactor) : undefined,
  );
  terminals.create({ executor: new LocalExecutor({ name: 'local' }), cwd: directory, workspaceRoot: directory, command, columns: 80, rows: 24 });
  await done;
  return sent;
}

// The value is printed in two writes, the second once the first has been sent, so it arrives in
// two chunks.
const SPLIT_PRINT = `printf 'before ${SECRET.slice(0, 7)}'; while [ ! -e go ]; do sleep 0.02; done; printf '${SECRET.slice(7)} after'; sleep 0.1`;

it('without redaction the value arrives in two chunks, each without the whole value (the case to catch)', async () => {
  const sent = await runTerminal(SPLIT_PRINT, undefined);
  const chunks = sent.filter((each) => each.data !== undefined).map((each) => each.data as string);
  expect(chunks.length).toBeGreaterThanOrEqual(2);
  expect(chunks.some((chunk) => chunk.includes(SECRET))).toBe(false);
  expect(chunks.join('')).toContain(SECRET);
});

it('with the platform redaction no chunk and no concatenation holds the value, and seq has no gap', async () => {
  const redactor = new SecretRedactor();
  redactor.setValues([SECRET]);
  const sent = await runTerminal(SPLIT_PRINT, redactor);
  const text = sent.map((each) => each.data ?? '').join('');
  expect(text).not.toContain(SECRET);
  expect(text).toContain('before ***');
  expect(text).toContain(' after');
  expect(sent.map((each) => each.seq)).toEqual(sent.map((_, index) => index + 1));
  expect(sent.at(-1)?.exited).toBe(true);
});

it('gives out at the exit what was held back as the possible start of a value', async () => {
  const redactor = new SecretRedactor();
  redactor.setValues([SECRET]);
  const sent = await runTerminal(`printf 'ends with ${SECRET.slice(0, 5)}'`, redactor);
  const text = sent.map((each) => each.data ?? '').join('');
  expect(text).toContain(`ends with ${SECRET.slice(0, 5)}`);
  expect(sent.at(-1)?.exited).toBe(true);
});
