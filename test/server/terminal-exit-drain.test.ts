/**
 * A terminal's exit is the last thing it sends: output the program wrote before it ended but
 * that is read only after the exit is known (a PTY's buffer read late, a loop held up when the
 * exit came) still goes out first, however long the program was quiet before it ended.
 */
import { expect, it } from 'vitest';
import type { Executor, ProcessExit, RunningProcess } from '../../src/executors/executor.js';
import type { NotificationParams } from '../../src/protocol/index.js';
import { ConnectionTerminals } from '../../src/server/terminals.js';

/** A PTY process the test drives: it prints, ends, and its last output is read after the end. */
function scriptedProcess() {
  const listeners = new Set<(chunk: string) => void>();
  let end!: (exit: ProcessExit) => void;
  const exited = new Promise<ProcessExit>((resolve) => (end = resolve));
  const process: RunningProcess = {
    pid: 4242,
    write: () => undefined,
    onOutput: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    exited,
    kill: () => undefined,
  };
  const print = (chunk: string) => {
    for (const listener of listeners) listener(chunk);
  };
  return { process, print, end };
}

it('sends output read shortly after the exit, even when the program was quiet for long before it ended', async () => {
  const scripted = scriptedProcess();
  const executor = { name: 'local', kind: 'local', spawn: () => scripted.process } as unknown as Executor;
  const sent: Array<NotificationParams<'terminal/output'>> = [];
  let exitSent!: () => void;
  const exitWasSent = new Promise<void>((resolve) => (exitSent = resolve));
  const terminals = new ConnectionTerminals(
    (params) => {
      sent.push(params);
      if (params.exited) exitSent();
    },
    () => undefined,
  );
  terminals.create({ executor, cwd: '/work', workspaceRoot: '/work', columns: 80, rows: 24 });
  scripted.print('first ');
  // Quiet for longer than the terminal waits for more output after an exit.
  await new Promise((resolve) => setTimeout(resolve, 200));
  scripted.end({ exitCode: 0, signal: null });
  // What the program wrote last is read 10 ms after its end was seen.
  await scripted.process.exited;
  setTimeout(() => scripted.print('last'), 10);
  await exitWasSent;
  expect(sent.map((each) => each.data ?? (each.exited ? `exit ${each.exitCode}` : ''))).toEqual(['first ', 'last', 'exit 0']);
  expect(sent.map((each) => each.seq)).toEqual([1, 2, 3]);
});
