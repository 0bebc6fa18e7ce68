/**
 * An empty or blank value (`--resume ""`, `--data-dir=`, an unset shell variable) is a usage
 * mistake naming the option or argument (exit 64), never taken as the option being absent: every
 * value-taking option and every positional argument of the whole command tree is tried, so an
 * option declared later is held to it too, and a few command lines go through the real CLI.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { CommanderError, type Command } from 'commander';
import { afterEach, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/program.js';
import { runCli } from '../helpers/environment.js';
import { useIsolatedHome } from '../helpers/isolated-home.js';
import { processGone, until } from '../helpers/processes.js';

const isolatedEnv = useIsolatedHome('blank-values-');

/** Every command of the tree under `command`, with the words that reach it. */
function commandsUnder(command: Command, words: string[] = []): { words: string[]; command: Command }[] {
  return [{ words, command }, ...command.commands.flatMap((child) => commandsUnder(child, [...words, child.name()]))];
}

/**
 * Parses `args` with a fresh tree in which no action runs and no error exits the process.
 * @returns the usage error commander raised with what it wrote on stderr, or undefined when the line was taken
 */
async function usageErrorOf(args: string[]): Promise<{ code: string; stderr: string } | undefined> {
  const program = buildProgram();
  let stderr = '';
  for (const { command } of commandsUnder(program)) {
    command.exitOverride((error) => {
      throw error;
    });
    command.configureOutput({ writeErr: (text) => (stderr += text), writeOut: () => {} });
    command.action(() => {
      throw new Error(`the action of ${command.name()} ran`);
    });
  }
  try {
    await program.parseAsync(['node', 'openvaala', ...args]);
  } catch (error) {
    if (error instanceof CommanderError) return { code: error.code, stderr };
    if (error instanceof Error && error.message.startsWith('the action of')) return undefined;
    throw error;
  }
  return undefined;
}

it('refuses an empty or blank value for every option that takes one, in every command, naming the option', async () => {
  const taken: string[] = [];
  let tried = 0;
  for (const { words, command } of commandsUnder(buildProgram())) {
    for (const option of command.options) {
      if (!option.required && !option.optional) continue;
      for (const value of ['', '  ']) {
        tried++;
        const line = [...words, `${option.long}=${value}`];
        const refused = await usageErrorOf(line);
        if (refused?.code !== 'commander.invalidArgument' || !refused.stderr.includes(`${option.long} must not be empty`)) taken.push(`openvaala ${line.join(' ')}: ${refused?.stderr ?? 'taken'}`);
      }
    }
  }
  expect(taken).toEqual([]);
  // The walk reached the options it is about (the tree has dozens of them).
  expect(tried).toBeGreaterThan(60);
});

it('refuses an empty or blank positional argument of every command, naming the argument', async () => {
  const lines: { line: string[]; name: string }[] = [];
  for (const { words, command } of commandsUnder(buildProgram())) {
    command.registeredArguments.forEach((argument, index) => {
      // The other arguments get a placeholder, so it is the one refused.
      for (const value of ['', ' ']) lines.push({ line: [...words, ...command.registeredArguments.map((_, other) => (other === index ? value : 'x'))], name: argument.name() });
    });
  }
  const taken: string[] = [];
  for (const { line, name } of lines) {
    const refused = await usageErrorOf(line);
    if (refused?.code !== 'commander.invalidArgument' || !refused.stderr.includes(`<${name}> must not be empty`)) taken.push(`openvaala ${JSON.stringify(line)}: ${refused?.stderr ?? 'taken'}`);
  }
  expect(taken).toEqual([]);
  expect(lines.length).toBeGreaterThan(20);
});

let home: string | undefined;
afterEach(async () => {
  // Should a refused line have started a server anyway, it is stopped rather than left running.
  const file = home && path.join(home, 'state', 'openvaala', 'runtime-server.yaml');
  if (file && existsSync(file)) {
    const pid = Number(/^pid: (\d+)$/m.exec(readFileSync(file, 'utf8'))?.[1]);
    if (pid) {
      process.kill(pid, 'SIGTERM');
      await until(() => processGone(pid), 15_000, `server ${pid} to exit`);
    }
  }
  home = undefined;
});

it('refuses blank values through the real CLI, before starting or creating anything', async () => {
  const env = isolatedEnv();
  home = isolatedEnv.home();
  const lines: [string[], string][] = [
    [['exec', '--resume', '', 'go on'], '--resume must not be empty'],
    [['exec', '--data-dir=', 'hello'], '--data-dir must not be empty'],
    [['tui', '--resume', ' '], '--resume must not be empty'],
    [['serve', '--host', ''], '--host must not be empty'],
    [['serve', '--port', ''], '--port must not be empty'],
    [['serve', '--data-dir', ''], '--data-dir must not be empty'],
    [['conversations', 'show', ''], '<conversation> must not be empty'],
    [['export', ''], '<conversation> must not be empty'],
    [['import', ' '], '<file> must not be empty'],
    [['app-server', '--listen', ''], '--listen must not be empty'],
  ];
  for (const [args, message] of lines) {
    const result = await runCli(args, { env, timeoutMs: 15_000 });
    expect(result.stderr, args.join(' ')).toContain(message);
    expect(result.code, args.join(' ')).toBe(64);
  }
  expect(existsSync(path.join(isolatedEnv.home(), 'state', 'openvaala', 'server.log'))).toBe(false);
  expect(existsSync(path.join(isolatedEnv.home(), 'data'))).toBe(false);
});
