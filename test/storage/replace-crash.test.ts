/**
 * Crash safety of `FileLogStorage.replaceStream` (the rewind of a session, docs/storage.md): a
 * child process replaces one stream over and over and is killed with SIGKILL at random
 * moments. After every kill the stream must hold exactly one whole version, the last one
 * acknowledged or the one being written, never a mix or a cut, and no damage is reported.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileLogStorage } from '../../src/storage/file/file-log-storage.js';
import type { LogProblem } from '../../src/storage/log-storage.js';
import { transpileSources } from '../helpers/transpile.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const childScript = path.join(here, 'replace-crash-child.mjs');
const KILLS = 25;

let workDirectory: string;
let moduleUrl: string;

/** Runs the child until it is killed a random moment after its first acknowledged replacement. */
function runChild(root: string): Promise<{ acks: string[]; stderr: string; signal: NodeJS.Signals | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [childScript, moduleUrl, root], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let timer: NodeJS.Timeout | undefined;
    const kill = (): void => {
      child.kill('SIGKILL');
    };
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      if (timer === undefined) timer = setTimeout(kill, Math.random() * 40);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    const safety = setTimeout(kill, 5000);
    child.on('error', reject);
    child.on('close', (_code, signal) => {
      clearTimeout(timer);
      clearTimeout(safety);
      const acks = stdout.split('\n').slice(0, -1).filter((line) => line.startsWith('ack ')).map((line) => line.slice(4));
      resolve({ acks, stderr, signal });
    });
  });
}

beforeAll(() => {
  workDirectory = fs.mkdtempSync(path.join(os.tmpdir(), 'openvaala-replace-crash-'));
  moduleUrl = transpileSources(['storage'], path.join(workDirectory, 'build'))('storage/file/file-log-storage.js');
});

afterAll(() => {
  fs.rmSync(workDirectory, { recursive: true, force: true });
});

describe('FileLogStorage.replaceStream under SIGKILL', () => {
  it(`leaves one whole version of the stream across ${KILLS} kills`, { timeout: 120_000 }, async () => {
    const root = path.join(workDirectory, 'data');
    for (let run = 1; run <= KILLS; run += 1) {
      const { acks, stderr, signal } = await runChild(root);
      expect(signal, `run ${run} stderr: ${stderr}`).toBe('SIGKILL');
      expect(stderr, `run ${run}`).not.toMatch(/problem|Error/);
      expect(acks.length, `run ${run}`).toBeGreaterThan(0);
      const problems: LogProblem[] = [];
      const reader = new FileLogStorage(root, { onProblem: (problem) => problems.push(problem) });
      const entries = await reader.read<{ index: number }>('rewind', 'main');
      expect(await reader.listStreams('rewind')).toEqual(['main']);
      await reader.close();
      expect(problems, `run ${run}`).toEqual([]);
      expect([15, 40], `run ${run}`).toContain(entries.length);
      entries.forEach((entry, position) => {
        if (entry.seq !== position + 1 || entry.value.index !== position) throw new Error(`run ${run}: entry ${position} is ${JSON.stringify(entry)}`);
      });
      // Killed after the last acknowledged replacement: it is there, or the next one is whole.
      const last = acks.at(-1);
      const lastLength = last === 'short' ? 15 : 40;
      expect([lastLength, lastLength === 15 ? 40 : 15]).toContain(entries.length);
    }
  });

  it('ignores a temporary file left by a crash before the rename, keeping the old content', async () => {
    const root = path.join(workDirectory, 'orphan');
    const logs = new FileLogStorage(root);
    await logs.append('rewind', 'main', [{ n: 1 }, { n: 2 }, { n: 3 }]);
    await logs.close();
    // What a process killed before its rename leaves: a complete or partial temporary file.
    fs.writeFileSync(path.join(root, 'rewind', 'main.jsonl.replace-0123456789ab'), '{"seq":1,"value":{"n":1}}\n{"seq":2,"val');
    const reopened = new FileLogStorage(root);
    expect((await reopened.read('rewind', 'main')).map((entry) => entry.value)).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    expect(await reopened.listStreams('rewind')).toEqual(['main']);
    expect((await reopened.append('rewind', 'main', [{ n: 4 }]))[0]?.seq).toBe(4);
    await reopened.close();
  });
});
