/**
 * Command output on every executor (local, local inside bubblewrap, SSH to a real OpenSSH
 * server, virtual): long output keeps its head and its end around a marker naming the omitted
 * range, a runaway command is collected in bounded memory, and terminal control reaches the
 * model cleaned while the tool result keeps it. Background and terminal commands (where the
 * executor can keep processes running) follow the same rules.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Workspace } from '../../src/executors/workspace.js';
import { BackgroundCommandRegistry } from '../../src/runtime/background-commands.js';
import { writeStdinTool } from '../../src/tools/background-commands.js';
import { createExecCommandTool, execCommandTool } from '../../src/tools/exec-command.js';
import { cleanTerminalText, toolOutputForModel } from '../../src/tools/terminal-text.js';
import { DEFAULT_TOOL_OUTPUT_LIMIT_BYTES, type Tool, type ToolContext, type ToolResult } from '../../src/tools/tool.js';
import { createExecutorFixture, EXECUTOR_VARIANTS, type ExecutorFixture } from '../helpers/executor-variants.js';
import { commandIdOf } from '../helpers/processes.js';

function call<Args>(tool: Tool<Args>, args: unknown, context: ToolContext): Promise<ToolResult> {
  return tool.invoke(args, context);
}

/** A build log of 4000 lines (about 170 KB) whose error is on its last line. */
const BUILD_LOG_COMMAND = 'i=1; while [ $i -le 4000 ]; do echo "[$i/4000] compiling src/ui/feature.ts ok"; i=$((i+1)); done; echo "error TS2304: cannot find name answer" >&2; exit 2';
const BUILD_LOG = `${Array.from({ length: 4000 }, (_, index) => `[${index + 1}/4000] compiling src/ui/feature.ts ok\n`).join('')}error TS2304: cannot find name answer\n`;
const MARKER = /\[… (\d+) bytes omitted \(bytes (\d+)–(\d+) of (\d+), lines (\d+)–(\d+) of (\d+)\) …\]\n/;

/** Checks that the text around a marker is exactly the original without the named range. */
function expectHeadAndTailOf(original: string, text: string): RegExpExecArray {
  const marker = MARKER.exec(text);
  expect(marker, text.slice(0, 300)).not.toBeNull();
  const [, , fromByte, toByte, totalBytes, fromLine, toLine, totalLines] = (marker as RegExpExecArray).map(Number);
  const bytes = Buffer.from(original);
  expect(totalBytes, `${text.slice(0, 300)} … ${text.slice(-300)}`).toBe(bytes.length);
  expect(totalLines).toBe(original.split('\n').length - (original.endsWith('\n') ? 1 : 0));
  const keptHead = Buffer.from(text).subarray(0, (fromByte as number) - 1);
  const tail = text.slice((marker as RegExpExecArray).index + (marker as RegExpExecArray)[0].length);
  // The head is the original's first bytes; a line break is added before the marker only when it ends mid-line.
  expect(keptHead.equals(bytes.subarray(0, (fromByte as number) - 1))).toBe(true);
  expect(text.slice(0, (marker as RegExpExecArray).index)).toBe(keptHead.toString() + (keptHead.length === 0 || keptHead.at(-1) === 0x0a ? '' : '\n'));
  expect(bytes.subarray(toByte as number).toString()).toBe(tail);
  expect(keptHead.toString().split('\n').length).toBe(fromLine);
  expect(bytes.subarray(0, toByte as number).toString().split('\n').length - (bytes[(toByte as number) - 1] === 0x0a ? 1 : 0)).toBe(toLine);
  return marker as RegExpExecArray;
}

describe.each(EXECUTOR_VARIANTS)('command output on the %s executor', (variant) => {
  let fixture: ExecutorFixture;
  let workspace: Workspace;
  const signal = new AbortController().signal;

  beforeAll(async () => {
    fixture = await createExecutorFixture(variant);
    workspace = await fixture.newWorkspace();
  }, 60_000);
  afterAll(async () => {
    await fixture?.dispose();
  });

  it('keeps a 168 KB build log whole, and the model reads its end after a marker naming the omitted range', async () => {
    const result = await call(execCommandTool, { command: BUILD_LOG_COMMAND }, { workspace, signal });
    expect(result.exitCode).toBe(2);
    expect(Buffer.byteLength(BUILD_LOG)).toBeGreaterThan(160_000);
    expect(result.output).toBe(`${BUILD_LOG}[exit code 2]`);
    const forModel = toolOutputForModel(result.output, DEFAULT_TOOL_OUTPUT_LIMIT_BYTES);
    expect(Buffer.byteLength(forModel)).toBeLessThanOrEqual(DEFAULT_TOOL_OUTPUT_LIMIT_BYTES);
    expect(forModel.endsWith('[4000/4000] compiling src/ui/feature.ts ok\nerror TS2304: cannot find name answer\n[exit code 2]')).toBe(true);
    expectHeadAndTailOf(`${BUILD_LOG}[exit code 2]`, forModel);
  }, 60_000);

  it('keeps the order in which a command wrote its output and its errors', async () => {
    const result = await call(execCommandTool, { command: 'i=1; while [ $i -le 300 ]; do echo "out $i"; echo "err $i" >&2; i=$((i+1)); done' }, { workspace, signal });
    const expected = Array.from({ length: 300 }, (_, index) => `out ${index + 1}\nerr ${index + 1}\n`).join('');
    expect(result.output).toBe(`${expected}[exit code 0]`);
  }, 60_000);

  it('collects past its bound as head and tail around a marker, on the executor itself', async () => {
    const bounded = createExecCommandTool({ maxOutputBytes: 8192 });
    const result = await call(bounded, { command: BUILD_LOG_COMMAND }, { workspace, signal });
    expect(result.structured).toMatchObject({ truncated: true });
    expect(result.output.endsWith('error TS2304: cannot find name answer\n[exit code 2]')).toBe(true);
    expect(Buffer.byteLength(result.output)).toBeLessThan(8192 + 200);
    expectHeadAndTailOf(BUILD_LOG, result.output.slice(0, -'[exit code 2]'.length));
  }, 60_000);

  it.skipIf(variant === 'virtual')('keeps a runaway 40 MB output bounded, with its last line', async () => {
    const bounded = createExecCommandTool({ maxOutputBytes: 64 * 1024 });
    const result = await call(bounded, { command: "head -c 40000000 /dev/zero | tr '\\0' x | fold -w 99; echo; echo 'the last line'" }, { workspace, signal });
    expect(Buffer.byteLength(result.output)).toBeLessThan(64 * 1024 + 200);
    expect(result.output.endsWith('\nthe last line\n[exit code 0]')).toBe(true);
    expect(result.output).toMatch(/\[… \d+ bytes omitted \(bytes \d+–\d+ of \d+, lines \d+–\d+ of 404042\) …\]/);
  }, 60_000);

  it('keeps terminal control in the result and gives the model the plain text', async () => {
    const result = await call(execCommandTool, { command: "printf '\\033[32mok\\033[0m\\n'; printf 'working 10%%\\rworking 100%%\\n'" }, { workspace, signal });
    expect(result.output).toBe('\u001b[32mok\u001b[0m\nworking 10%\rworking 100%\n[exit code 0]');
    expect(toolOutputForModel(result.output, DEFAULT_TOOL_OUTPUT_LIMIT_BYTES)).toBe('ok\nworking 100%\n[exit code 0]');
  });

  describe.skipIf(variant === 'virtual')('background and terminal commands', () => {
    it('keep the head and the end of unread output around a marker', async () => {
      const commands = new BackgroundCommandRegistry({ outputLimitBytes: 4096 });
      const context: ToolContext = { workspace, signal, commands };
      try {
        // One stream: over SSH, stdout and stderr of a spawned command travel apart and may be reordered.
        const started = await call(execCommandTool, { command: `exec 2>&1; ${BUILD_LOG_COMMAND}`, yield_after_ms: 20_000 }, context);
        expect(started.output.endsWith('error TS2304: cannot find name answer\n[exit code 2]')).toBe(true);
        expectHeadAndTailOf(BUILD_LOG, started.output.slice(0, -'[exit code 2]'.length));
      } finally {
        await commands.closeAll();
      }
    }, 60_000);

    it('run in a terminal: colours and progress redraws reach the model as plain text', async () => {
      const commands = new BackgroundCommandRegistry();
      const context: ToolContext = { workspace, signal, commands };
      try {
        const started = await call(execCommandTool, { command: "printf '\\033[1;31mred\\033[0m\\n'; read line; printf 'step 1\\rstep 2\\rdone: %s\\n' \"$line\"", tty: true, yield_after_ms: 1500 }, context);
        const id = commandIdOf(started.output);
        const answered = await call(writeStdinTool, { command_id: id, input: 'yes\n', yield_after_ms: 5000 }, context);
        const raw = `${started.output}\n${answered.output}`;
        expect(raw).toContain('\u001b[1;31mred\u001b[0m');
        const plain = cleanTerminalText(raw);
        expect(plain).toContain('red\n');
        expect(plain).toContain('done: yes\n');
        expect(plain).not.toContain('step 1');
        expect(plain).not.toContain('\u001b');
      } finally {
        await commands.closeAll();
      }
    }, 60_000);
  });
});
