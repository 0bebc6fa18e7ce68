/**
 * `openvaala <word>` where `<word>` is no command: the real CLI says which word is unknown,
 * suggests the nearest commands, and exits 64 (a usage mistake) without opening the terminal UI.
 */
import { expect, it } from 'vitest';
import { editDistance, similarNames } from '../../src/similar-names.js';
import { runCli } from '../helpers/environment.js';
import { useIsolatedHome } from '../helpers/isolated-home.js';

const isolatedEnv = useIsolatedHome('unknown-command-');

it('measures edits between words, a swap of two neighbours counting once', () => {
  expect(editDistance('export', 'export')).toBe(0);
  expect(editDistance('expor', 'export')).toBe(1);
  expect(editDistance('exprot', 'export')).toBe(1);
  expect(editDistance('serve', 'server')).toBe(1);
  expect(editDistance('', 'tui')).toBe(3);
  expect(editDistance('frobnicate', 'import')).toBeGreaterThan(4);
});

it('suggests the nearest commands and nothing for a word like none of them', () => {
  const names = ['serve', 'server', 'exec', 'export', 'import', 'tui', 'conversations'];
  expect(similarNames('expor', names)).toEqual(['export']);
  expect(similarNames('serv', names)).toEqual(['serve', 'server']);
  expect(similarNames('conv', names)).toEqual(['conversations']);
  expect(similarNames('frobnicate', names)).toEqual([]);
});

it('names the unknown word and the command meant, exit 64, for a mistyped command with its arguments', async () => {
  const result = await runCli(['expor', 'last'], { env: isolatedEnv() });
  expect(result.code).toBe(64);
  expect(result.stderr).toContain("unknown command 'expor' (did you mean 'export'?)");
  expect(result.stderr).not.toContain('too many arguments');
});

it('names the unknown word with no suggestion when nothing is near it', async () => {
  const result = await runCli(['frobnicate'], { env: isolatedEnv() });
  expect(result.code).toBe(64);
  expect(result.stderr).toContain("unknown command 'frobnicate'; `openvaala --help` lists the commands");
});

it('says an empty or blank word is no command, without suggesting every command', async () => {
  for (const args of [[''], ['conversations', ' ']]) {
    const result = await runCli(args, { env: isolatedEnv() });
    expect(result.code, JSON.stringify(args)).toBe(64);
    expect(result.stderr, JSON.stringify(args)).toContain(`error: an empty word is no command; \`openvaala${args.length > 1 ? ' conversations' : ''} --help\` lists the commands`);
    expect(result.stderr).not.toContain('did you mean');
  }
});

it('still refuses extra operands to a real command', async () => {
  const result = await runCli(['server', 'status', 'extra'], { env: isolatedEnv() });
  expect(result.code).toBe(64);
  expect(result.stderr).toContain('too many arguments');
});

it('takes `help` and `help <command>` as git and npm do', async () => {
  const root = await runCli(['help'], { env: isolatedEnv() });
  expect(root.code).toBe(0);
  expect(root.stdout).toContain('Usage: openvaala');
  const exec = await runCli(['help', 'exec'], { env: isolatedEnv() });
  expect(exec.code).toBe(0);
  expect(exec.stdout).toContain('Usage: openvaala exec');
  const unknown = await runCli(['help', 'frobnicate'], { env: isolatedEnv() });
  expect(unknown.code).toBe(64);
});

it('refuses empty option values and placement options a resumed conversation cannot take, naming the option', async () => {
  const env = isolatedEnv();
  for (const option of ['--model', '--agent', '--executor', '--cwd']) {
    const result = await runCli(['exec', option, '', 'hi'], { env });
    expect(result.code, result.stderr).toBe(64);
    expect(result.stderr).toContain(`${option} must not be empty`);
  }
  for (const option of ['--cwd', '--executor']) {
    const result = await runCli(['exec', '--resume', 'last', option, option === '--cwd' ? '/tmp' : 'local', 'hi'], { env });
    expect(result.code, result.stderr).toBe(64);
    expect(result.stderr).toContain(`${option} applies to a new conversation; a resumed one keeps its work location`);
  }
});

it('says a usage mistake in a line or two, pointing at --help, instead of printing the whole help', async () => {
  const typo = await runCli(['exce', 'hi'], { env: isolatedEnv() });
  expect(typo.code).toBe(64);
  expect(typo.stderr).not.toContain('Usage:');
  expect(typo.stderr.trim().split('\n')).toHaveLength(1);
  const badOption = await runCli(['exec', '--bogus'], { env: isolatedEnv() });
  expect(badOption.code).toBe(64);
  expect(badOption.stderr).toContain("unknown option '--bogus'");
  expect(badOption.stderr).toContain('(add --help for the usage)');
  expect(badOption.stderr).not.toContain('Usage:');
});
