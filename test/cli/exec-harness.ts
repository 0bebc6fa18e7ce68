/**
 * `openvaala exec` run in the test process (`runExec`) against an in-process server with the
 * scripted mock model: exec finds the server through the server information it wrote, as it
 * finds one started by `openvaala serve`, and its output is kept as text.
 */
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { vi } from 'vitest';
import { runExec, type ExecOptions } from '../../src/cli/exec.js';
import type { OutputStreams } from '../../src/cli/exec-output.js';
import type { TestEnvironment } from '../helpers/environment.js';
import type { InProcessServer } from '../helpers/in-process-server.js';

/** Streams that keep what is written, as text. */
export function capturedStreams(): { streams: OutputStreams; stdout: () => string; stderr: () => string } {
  let out = '';
  let err = '';
  // Writable calls write() synchronously: the text is there as soon as the write returns.
  const stdout = new Writable({ write: (chunk: Buffer | string, _encoding, done) => ((out += chunk.toString()), done()) });
  const stderr = new Writable({ write: (chunk: Buffer | string, _encoding, done) => ((err += chunk.toString()), done()) });
  return { streams: { stdout, stderr }, stdout: () => out, stderr: () => err };
}

/** What one run of exec printed, and its exit code. */
export interface ExecRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs exec against the harness's server. The XDG directories are those of the test
 * environment, so exec's resume hints read as with the default directories.
 */
export async function execAgainst(harness: InProcessServer, prompt: string, options: Partial<ExecOptions> = {}): Promise<ExecRun> {
  const root = harness.environment.root;
  vi.stubEnv('XDG_CONFIG_HOME', path.join(root, 'config'));
  vi.stubEnv('XDG_DATA_HOME', path.join(root, 'data'));
  vi.stubEnv('XDG_STATE_HOME', path.join(root, 'state'));
  const output = capturedStreams();
  const code = await runExec({ prompt, cwd: harness.environment.workDir, json: false, ...options }, output.streams);
  return { code, stdout: output.stdout(), stderr: output.stderr() };
}

/** Writes executable hook scripts under `<root>/hooks/` and `hooks.yaml` (where `$HOOKS` stands for that folder). */
export function writeHooks(environment: TestEnvironment, hooksYaml: string, scripts: Record<string, string> = {}): void {
  const folder = path.join(environment.root, 'hooks');
  mkdirSync(folder, { recursive: true });
  for (const [name, body] of Object.entries(scripts)) {
    writeFileSync(path.join(folder, name), `#!/usr/bin/env bash\n${body}\n`);
    chmodSync(path.join(folder, name), 0o755);
  }
  writeFileSync(path.join(environment.paths.configDir, 'hooks.yaml'), hooksYaml.replaceAll('$HOOKS', folder));
}

/** How many times `text` occurs in `within`. */
export function occurrences(within: string, text: string): number {
  return within.split(text).length - 1;
}
