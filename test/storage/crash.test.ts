/**
 * Crash safety of FileLogStorage (SPEC §4): a child process appends in a loop and is killed
 * with SIGKILL at random moments, many times over the same stream. After every kill, every
 * batch the child acknowledged must be present, in order, and the stream must hold
 * contiguous seq numbers from 1.
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
const childScript = path.join(here, 'crash-child.mjs');
const KILLS = 60;

interface Ack {
  first: number;
  last: number;
  run: number;
  batch: number;
  size: number;
}

interface Stored {
  run: number;
  batch: number;
  index: number;
}

let workDirectory: string;
let moduleUrl: string;

/** Runs one child until it is killed; returns the batches it acknowledged. */
function runChild(root: string, run: number): Promise<{ acks: Ack[]; stderr: string; signal: NodeJS.Signals | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [childScript, moduleUrl, root, String(run)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let timer: NodeJS.Timeout | undefined;
    const kill = (): void => {
      child.kill('SIGKILL');
    };
    // Most runs die a random moment after their first acknowledged append; some during start-up.
    if (run % 10 === 0) timer = setTimeout(kill, Math.random() * 80);
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      if (timer === undefined) timer = setTimeout(kill, Math.random() * 60);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    const safety = setTimeout(kill, 5000);
    child.on('error', reject);
    child.on('close', (_code, signal) => {
      clearTimeout(timer);
      clearTimeout(safety);
      const acks = stdout
        .split('\n')
        .slice(0, -1) // the last piece is incomplete (or empty)
        .filter((line) => line.startsWith('ack '))
        .map((line) => {
          const [first, last, runNumber, batch, size] = line.slice(4).split(' ').map(Number) as [number, number, number, number, number];
          return { first, last, run: runNumber, batch, size };
        });
      resolve({ acks, stderr, signal });
    });
  });
}

beforeAll(() => {
  workDirectory = fs.mkdtempSync(path.join(os.tmpdir(), 'openvaala-crash-'));
  moduleUrl = transpileSources(['storage'], path.join(workDirectory, 'build'))('storage/file/file-log-storage.js');
});

afterAll(() => {
  fs.rmSync(workDirectory, { recursive: true, force: true });
});

describe('FileLogStorage under SIGKILL', () => {
  it(`keeps every acknowledged batch across ${KILLS} kills`, { timeout: 120_000 }, async () => {
    const root = path.join(workDirectory, 'data');
    const acknowledged: Ack[] = [];
    let killedWhileAppending = 0;
    for (let run = 1; run <= KILLS; run += 1) {
      const { acks, stderr, signal } = await runChild(root, run);
      expect(signal, `run ${run} stderr: ${stderr}`).toBe('SIGKILL');
      expect(stderr, `run ${run}`).not.toMatch(/corrupt_line|Error/);
      if (acks.length > 0) killedWhileAppending += 1;
      acknowledged.push(...acks);

      const problems: LogProblem[] = [];
      const reader = new FileLogStorage(root, { onProblem: (problem) => problems.push(problem) });
      const entries = await reader.read<Stored>('crash', 'main');
      await reader.close();
      expect(problems.filter((problem) => problem.kind === 'corrupt_line'), `run ${run}`).toEqual([]);
      entries.forEach((entry, index) => {
        if (entry.seq !== index + 1) throw new Error(`run ${run}: entry ${index} has seq ${entry.seq}, expected ${index + 1}`);
      });
      for (const ack of acknowledged) {
        for (let seq = ack.first; seq <= ack.last; seq += 1) {
          const value = entries[seq - 1]?.value;
          if (value?.run !== ack.run || value.batch !== ack.batch || value.index !== seq - ack.first) {
            throw new Error(`run ${run}: acknowledged seq ${seq} (run ${ack.run}, batch ${ack.batch}) is ${JSON.stringify(value)}`);
          }
        }
        expect(ack.last - ack.first + 1).toBe(ack.size);
      }
    }
    expect(acknowledged.length).toBeGreaterThan(KILLS);
    expect(killedWhileAppending).toBeGreaterThan(KILLS / 2);
  });
});
