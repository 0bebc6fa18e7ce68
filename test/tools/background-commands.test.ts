/**
 * Background and interactive commands through the tools: exec_command with yield_after_ms /
 * tty, write_stdin, list_commands, kill_command, on the local executor.
 */
import { mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Executor } from '../../src/executors/executor.js';
import { LocalExecutor } from '../../src/executors/local/local-executor.js';
import { Workspace } from '../../src/executors/workspace.js';
import { BackgroundCommandRegistry } from '../../src/runtime/background-commands.js';
import { killCommandTool, listCommandsTool, writeStdinTool } from '../../src/tools/background-commands.js';
import { execCommandTool } from '../../src/tools/exec-command.js';
import { TOOL_OUTPUT_RETAINED_BYTES, type ToolContext } from '../../src/tools/tool.js';
import { commandIdOf, processGone, until } from '../helpers/processes.js';

/** A node program that prints "ready", then answers each input line with "got: LINE". */
const ECHO_SERVER = `node -e 'console.log("ready"); process.stdin.setEncoding("utf8"); let rest = ""; process.stdin.on("data", (d) => { rest += d; let i; while ((i = rest.indexOf("\\n")) >= 0) { console.log("got: " + rest.slice(0, i)); rest = rest.slice(i + 1); } }); setInterval(() => {}, 1000);'`;

let root: string;
let executor: LocalExecutor;
let commands: BackgroundCommandRegistry;
let context: ToolContext;

beforeAll(async () => {
  root = await realpath(await mkdtemp(path.join(tmpdir(), 'background-commands-')));
  executor = new LocalExecutor({ name: 'local' });
});

afterEach(async () => {
  await commands.closeAll();
});

afterAll(async () => {
  await executor.close();
  await rm(root, { recursive: true, force: true });
});

function freshContext(registry = new BackgroundCommandRegistry()): ToolContext {
  commands = registry;
  context = { workspace: new Workspace(executor, root), signal: new AbortController().signal, commands };
  return context;
}

describe('background commands', () => {
  it('keeps a command running after the call, lists it, talks to it over stdin, and kills it when the registry closes', async () => {
    freshContext();
    const started = await execCommandTool.invoke({ command: ECHO_SERVER, yield_after_ms: 1500 }, context);
    expect(started.isError).toBe(false);
    expect(started.output).toContain('ready\n');
    expect(started.output).toContain('[still running as command_id');
    const id = commandIdOf(started.output);
    const pid = started.structured?.pid as number;
    expect(processGone(pid)).toBe(false);

    const listed = await listCommandsTool.invoke({}, context);
    expect(listed.output).toContain(id);
    expect(listed.output).toMatch(new RegExp(`${id}\\s+running\\s+pid ${pid}`));

    const answered = await writeStdinTool.invoke({ command_id: id, input: 'hello\n', yield_after_ms: 1500 }, context);
    expect(answered.output).toContain('got: hello');
    expect(answered.output).not.toContain('ready');
    const again = await writeStdinTool.invoke({ command_id: id, input: 'second\n', yield_after_ms: 1500 }, context);
    expect(again.output).toContain('got: second');
    expect(again.output).not.toContain('got: hello');

    await commands.closeAll();
    await until(() => processGone(pid), 5000, 'the command to die');
    const refused = await execCommandTool.invoke({ command: 'sleep 1', yield_after_ms: 10 }, context);
    expect(refused).toMatchObject({ isError: true });
    expect(refused.output).toContain('session is closed');
  });

  it('returns the exit code and no command_id when the command ends before the yield', async () => {
    freshContext();
    const started = Date.now();
    const result = await execCommandTool.invoke({ command: 'echo quick; exit 4', yield_after_ms: 10_000 }, context);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(result.output).toBe('quick\n[exit code 4]');
    expect(result.exitCode).toBe(4);
    const listed = await listCommandsTool.invoke({}, context);
    expect(listed.output).toMatch(/exited \(exit code 4\).*echo quick/);
  });

  it('drives an interactive python in a pseudo-terminal', async () => {
    freshContext();
    const started = await execCommandTool.invoke({ command: 'python3 -i -q', tty: true, yield_after_ms: 3000 }, context);
    expect(started.output).toContain('>>>');
    const id = commandIdOf(started.output);
    const answer = await writeStdinTool.invoke({ command_id: id, input: 'print(6*7)\n', yield_after_ms: 2000 }, context);
    expect(answer.output).toMatch(/^42\r?$/m);
    // A terminal tells the program it is interactive.
    const isatty = await writeStdinTool.invoke({ command_id: id, input: 'import sys; print("tty", sys.stdin.isatty())\n', yield_after_ms: 2000 }, context);
    expect(isatty.output).toContain('tty True');
    const ended = await writeStdinTool.invoke({ command_id: id, input: 'exit()\n', yield_after_ms: 5000 }, context);
    expect(ended.output).toContain('[exit code 0]');
  });

  it('kill_command kills the whole process group, children included', async () => {
    freshContext();
    const started = await execCommandTool.invoke({ command: 'sleep 300 & echo "child $!"; sleep 300', yield_after_ms: 1000 }, context);
    const id = commandIdOf(started.output);
    const leader = started.structured?.pid as number;
    const child = Number(/child (\d+)/.exec(started.output)?.[1]);
    expect(child).toBeGreaterThan(0);
    expect(processGone(child)).toBe(false);
    const killed = await killCommandTool.invoke({ command_id: id }, context);
    expect(killed.isError).toBe(false);
    expect(killed.output).toContain('[killed by SIGTERM]');
    await until(() => processGone(leader) && processGone(child), 5000, 'the group to die');
    const listed = await listCommandsTool.invoke({}, context);
    expect(listed.output).toContain(`${id}  exited (killed by SIGTERM)`);
  });

  it('kills a background command that runs past an explicit timeout_ms', async () => {
    freshContext();
    const started = await execCommandTool.invoke({ command: 'echo up; sleep 300', yield_after_ms: 200, timeout_ms: 600 }, context);
    const id = commandIdOf(started.output);
    const later = await writeStdinTool.invoke({ command_id: id, input: '', yield_after_ms: 5000 }, context);
    expect(later).toMatchObject({ isError: true });
    expect(later.output).toContain('[timed out; killed]');
  });

  it('keeps the head and the newest output when nobody reads, and names what was omitted', async () => {
    freshContext(new BackgroundCommandRegistry({ outputLimitBytes: 1000 }));
    const result = await execCommandTool.invoke({ command: 'for i in $(seq 1 500); do echo "line $i"; done', yield_after_ms: 5000 }, context);
    expect(result.output).toMatch(/^line 1\nline 2\n[^]*\n\[… \d+ bytes omitted \(bytes \d+–\d+ of 4392, lines \d+–\d+ of 500\) …\]\n[^]*line 500\n\[exit code 0\]$/);
    expect(Buffer.byteLength(result.output)).toBeLessThan(1200);
  });

  it('streams live output of a command that writes without end only up to the stored bound', async () => {
    freshContext();
    let streamed = 0;
    const streaming: ToolContext = { ...context, onOutput: (chunk) => (streamed += Buffer.byteLength(chunk)) };
    const result = await execCommandTool.invoke({ command: "head -c 20000000 /dev/zero | tr '\\0' y", yield_after_ms: 5000 }, streaming);
    expect(result.output).toMatch(/\[… \d+ bytes omitted \(bytes \d+–\d+ of 20000000, lines 1–1 of 1\) …\]/);
    expect(streamed).toBeGreaterThan(0);
    expect(streamed).toBeLessThan(TOOL_OUTPUT_RETAINED_BYTES + 128 * 1024);
  });

  it('refuses unknown ids, and sessions without a registry', async () => {
    freshContext();
    const unknown = await writeStdinTool.invoke({ command_id: 'cmd_nope', input: 'x' }, context);
    expect(unknown).toMatchObject({ isError: true });
    expect(unknown.output).toContain('no command "cmd_nope"');
    const kill = await killCommandTool.invoke({ command_id: 'cmd_nope' }, context);
    expect(kill.isError).toBe(true);
    const noRegistry = await execCommandTool.invoke({ command: 'sleep 1', yield_after_ms: 10 }, { workspace: context.workspace, signal: context.signal });
    expect(noRegistry.isError).toBe(true);
    expect(noRegistry.output).toContain('background commands are not available here');
    const bad = await execCommandTool.invoke({ command: 'true', yield_after_ms: 0 }, context);
    expect(bad.output).toContain('yield_after_ms');
  });

  it('says clearly when the executor cannot keep commands running', async () => {
    freshContext();
    const withoutSpawn: Executor = { name: 'sandbox', kind: 'virtual', fs: executor.fs, run: (request) => executor.run(request), close: async () => undefined };
    const result = await execCommandTool.invoke({ command: 'sleep 1', yield_after_ms: 10 }, { ...context, workspace: new Workspace(withoutSpawn, root) });
    expect(result.isError).toBe(true);
    expect(result.output).toContain('not supported on executor kind "virtual"');
  });

  it('kills spawned commands when the executor closes', async () => {
    const own = new LocalExecutor({ name: 'own' });
    const running = own.spawn({ command: 'sleep 300', cwd: root });
    const pid = running.pid as number;
    expect(processGone(pid)).toBe(false);
    await own.close();
    await until(() => processGone(pid), 5000, 'the process to die');
    expect(() => own.spawn({ command: 'true', cwd: root })).toThrow(/closed/);
    freshContext();
  });
});
