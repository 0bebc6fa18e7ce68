/**
 * `npm run demo` end to end: the scripted agent fixes the sample repository's failing test.
 */
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PACKAGE_ROOT } from '../../src/package-info.js';

describe('the demo', () => {
  it('fixes the sample repository and exits 0 with its tests passing', async () => {
    const { code, stdout } = await new Promise<{ code: number | null; stdout: string }>((resolve, reject) => {
      const child = spawn(process.execPath, [path.join(PACKAGE_ROOT, 'dist', 'demo', 'run-demo.js')], { stdio: ['ignore', 'pipe', 'pipe'] });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.once('error', reject);
      child.once('close', (exitCode) => resolve({ code: exitCode, stdout: output }));
    });
    // The demo keeps its temporary directory so people can look at it, and says which; the
    // test removes it.
    const kept = /^kept for a look: (\S+) /m.exec(stdout)?.[1];
    if (kept) rmSync(kept, { recursive: true, force: true });
    expect(kept).toBeDefined();
    expect(path.resolve(/^data dir: (.+)$/m.exec(stdout)?.[1] ?? '', '..', '..')).toBe(kept);
    expect(stdout).toContain('its tests before: FAIL');
    expect(stdout).toContain('▸ apply_patch src/cart.js');
    expect(stdout).toContain('its tests after: pass');
    expect(stdout).toMatch(/metadata\.jsonl/);
    expect(stdout).toMatch(/sess_[0-9a-z]+\.jsonl/);
    expect(code).toBe(0);
  }, 60_000);
});
