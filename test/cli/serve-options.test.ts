/**
 * `serve`'s arguments are read without commander when they are plain (serve-options.ts). Every
 * command line the quick reading takes must give exactly the options commander gives, and every
 * one it cannot read exactly must be left to commander (undefined).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { buildProgram } from '../../src/cli/program.js';
import { readServeArgumentsQuickly, SERVE_OPTIONS } from '../../src/cli/serve-options.js';

const directory = mkdtempSync(path.join(os.tmpdir(), 'serve-options-'));
const file = path.join(directory, 'file.txt');
writeFileSync(file, 'x');
afterAll(() => rmSync(directory, { recursive: true, force: true }));

/** The options commander's `serve` command holds after reading `args` (only for arguments commander accepts). */
function commanderOptions(args: string[]): Record<string, unknown> {
  const serve = buildProgram('serve').commands.find((command) => command.name() === 'serve');
  if (!serve) throw new Error('no serve command');
  const { operands, unknown } = serve.parseOptions(args);
  expect({ operands, unknown }).toEqual({ operands: [], unknown: [] });
  return { ...serve.opts() };
}

it('reads plain serve command lines exactly as commander does', () => {
  const accepted = [
    [],
    ['--port', '0'],
    ['--port=0', '--host', '0.0.0.0'],
    ['--port', '1', '--port', '65535'],
    ['--data-dir', directory, '--config-dir', directory, '--web-root', directory],
    ['--exit-when-idle', '5000', '--platform'],
    ['--allow-origin', 'http://a.example', '--allow-origin=http://b.example', '--allow-host', 'box.lan'],
  ];
  for (const args of accepted) {
    const quick = readServeArgumentsQuickly(args);
    expect(quick, args.join(' ')).toBeDefined();
    expect(quick, args.join(' ')).toEqual(commanderOptions(args));
  }
});

it('leaves to commander what it cannot read exactly: help, mistakes, positional words, blank values, values that look like options', () => {
  const left = [
    ['--help'],
    ['-h'],
    ['--port'],
    ['--port', 'x'],
    ['--port', '70000'],
    ['--port', '-1'],
    ['--exit-when-idle', '0'],
    ['--config-dir', path.join(directory, 'missing')],
    ['--web-root', file],
    ['--platform=yes'],
    ['--no-platform'],
    ['--prot', '0'],
    ['extra'],
    ['--', '--port', '0'],
    ['--allow-origin', 'http://a.example', 'http://b.example'],
    ['--data-dir', '--port'],
    // Blank values, which commander refuses: the quick reading must not serve with them.
    ['--host', ''],
    ['--port='],
    ['--data-dir', ' '],
    ['--allow-host', 'box.lan', '--allow-host', ''],
  ];
  for (const args of left) expect(readServeArgumentsQuickly(args), args.join(' ')).toBeUndefined();
});

it('declares through one table every option commander shows for serve', () => {
  const serve = buildProgram('serve').commands.find((command) => command.name() === 'serve');
  const declared = serve?.options.map((option) => option.flags).filter((flags) => flags !== '-h, --help');
  expect(declared).toEqual(SERVE_OPTIONS.map((option) => option.flags));
});
