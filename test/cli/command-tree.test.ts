/**
 * `openvaala <command>` builds only that command's part of the tree; these tests hold that each
 * such part is exactly the command the whole tree declares, so no flag or subcommand is lost.
 */
import { expect, it } from 'vitest';
import { buildProgram, TOP_LEVEL_COMMANDS } from '../../src/cli/program.js';
import { runCli } from '../helpers/environment.js';
import { useIsolatedHome } from '../helpers/isolated-home.js';

const isolatedEnv = useIsolatedHome('command-tree-');

/** A command's help, with the help of every subcommand beneath it, as one text. */
function describeTree(command: ReturnType<typeof buildProgram>): string {
  return [command.helpInformation(), ...command.commands.map(describeTree)].join('\n');
}

it('lists every top-level command of the whole tree, in order', () => {
  expect(buildProgram().commands.map((command) => command.name())).toEqual([...TOP_LEVEL_COMMANDS]);
});

it('builds, for each command alone, the same command as the whole tree does', () => {
  const whole = buildProgram();
  for (const name of TOP_LEVEL_COMMANDS) {
    const alone = buildProgram(name);
    expect(alone.commands.map((command) => command.name())).toEqual([name]);
    const fromWhole = whole.commands.find((command) => command.name() === name);
    expect(fromWhole, name).toBeDefined();
    expect(describeTree(alone.commands[0]!), name).toBe(describeTree(fromWhole!));
    // The root keeps the terminal UI's own options whichever command is built.
    expect(alone.options.map((option) => option.long)).toEqual(whole.options.map((option) => option.long));
  }
});

it('answers `serve --help` and `help serve` with the serve command help from the real CLI', async () => {
  const direct = await runCli(['serve', '--help'], { env: isolatedEnv() });
  expect(direct.code).toBe(0);
  expect(direct.stdout).toContain('Usage: openvaala serve');
  const viaHelp = await runCli(['help', 'serve'], { env: isolatedEnv() });
  expect(viaHelp.code).toBe(0);
  expect(viaHelp.stdout).toBe(direct.stdout);
});

it('names a mistyped subcommand of conversations, whose default is list, rather than "too many arguments"', async () => {
  const mistyped = await runCli(['conversations', 'lst'], { env: isolatedEnv() });
  expect(mistyped.code).toBe(64);
  expect(mistyped.stderr).toContain("unknown command 'lst' (did you mean 'list'?); `openvaala conversations --help` lists the commands");
  const extra = await runCli(['conversations', 'list', 'extra'], { env: isolatedEnv() });
  expect(extra.code).toBe(64);
  expect(extra.stderr).toContain("too many arguments for 'list'");
});

it('takes --config-dir wherever it takes --data-dir, so one command line fits every command', () => {
  const lacking: string[] = [];
  const visit = (command: ReturnType<typeof buildProgram>, prefix: string) => {
    const longs = command.options.map((option) => option.long);
    if (longs.includes('--data-dir') && !longs.includes('--config-dir')) lacking.push(`${prefix}${command.name()}`);
    for (const child of command.commands) visit(child, `${prefix}${command.name()} `);
  };
  for (const command of buildProgram().commands) visit(command, '');
  expect(lacking).toEqual([]);
});
