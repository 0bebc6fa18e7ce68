/**
 * Internal failures of a tool (JavaScript's own errors, thrown non-errors) never reach the
 * model as a reason: the result says what the tool could not do, and the details go to the
 * server log with a reference.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { LocalFileSystem } from '../../src/executors/local/local-file-system.js';
import { Workspace } from '../../src/executors/workspace.js';
import { applyPatchTool } from '../../src/tools/apply-patch/index.js';
import { setToolFailureLogger } from '../../src/tools/internal-errors.js';
import { readFileTool } from '../../src/tools/read-file.js';
import { defineTool } from '../../src/tools/tool.js';
import { createFileSystemExecutor } from '../helpers/file-system-executor.js';

const logged: Record<string, unknown>[] = [];
beforeAll(() => {
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      logged.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  setToolFailureLogger(pino({ level: 'error' }, sink));
});
afterAll(() => setToolFailureLogger(undefined));
afterEach(() => {
  logged.length = 0;
});

let directory: string | undefined;
afterEach(async () => {
  if (directory !== undefined) await rm(directory, { recursive: true, force: true });
  directory = undefined;
});

/** A local file system whose reads fail the way a bug in the code would. */
class BrokenReads extends LocalFileSystem {
  override async readFile(): Promise<Uint8Array> {
    throw new RangeError('Maximum call stack size exceeded');
  }
}

async function workspaceOn(fileSystem: LocalFileSystem): Promise<Workspace> {
  directory = await mkdtemp(path.join(tmpdir(), 'openvaala-tool-failures-'));
  await writeFile(path.join(directory, 'small.txt'), 'alpha\nbeta\n');
  return new Workspace(createFileSystemExecutor(fileSystem), directory);
}

const signal = new AbortController().signal;

describe('defineTool', () => {
  it.each([
    ['a RangeError', new RangeError('Maximum call stack size exceeded')],
    ['a TypeError', new TypeError("Cannot read properties of undefined (reading 'length')")],
    ['a thrown string', 'plain string'],
  ])('replaces %s by what the tool could not do, and logs it', async (_kind, thrown) => {
    const tool = defineTool({
      name: 'sample',
      action: 'count the lines',
      description: 'test tool',
      parameters: z.object({}),
      async execute() {
        throw thrown;
      },
    });
    const result = await tool.invoke({}, { workspace: await workspaceOn(new LocalFileSystem()), signal });
    expect(result.isError).toBe(true);
    expect(result.output).toMatch(/^sample: could not count the lines: an internal error occurred in the tool \(logged on the server as [0-9a-f]{8}\)$/);
    const reference = /as ([0-9a-f]{8})/.exec(result.output)?.[1];
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ tool: 'sample', reference });
    expect(JSON.stringify(logged[0])).toContain(thrown instanceof Error ? thrown.message : thrown);
  });

  it("passes a tool's own error message on unchanged", async () => {
    const result = await readFileTool.invoke({ path: 'missing.txt' }, { workspace: await workspaceOn(new LocalFileSystem()), signal });
    expect(result.isError).toBe(true);
    expect(result.output).toMatch(/^read_file: .*missing\.txt/);
    expect(logged).toHaveLength(0);
  });

  it('gives read_file a failure in its own terms when the file system fails internally', async () => {
    const result = await readFileTool.invoke({ path: 'small.txt' }, { workspace: await workspaceOn(new BrokenReads()), signal });
    expect(result.output).not.toContain('Maximum call stack');
    expect(result.output).toMatch(/^read_file: could not read the file: an internal error/);
  });
});

describe('apply_patch', () => {
  it('names the section it could not apply, never the internal reason', async () => {
    const patch = '*** Begin Patch\n*** Update File: small.txt\n@@\n-alpha\n+ALPHA\n*** End Patch';
    const result = await applyPatchTool.invoke({ patch }, { workspace: await workspaceOn(new BrokenReads()), signal });
    expect(result.isError).toBe(true);
    expect(result.output).not.toContain('Maximum call stack');
    expect(result.output).toMatch(/^apply_patch: cannot update small\.txt \(patch line 2\): an internal error occurred in the tool \(logged on the server as [0-9a-f]{8}\)$/);
    expect(logged).toHaveLength(1);
  });
});
