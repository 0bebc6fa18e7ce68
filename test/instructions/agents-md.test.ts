/**
 * AGENTS.md: the files from the repository root down to the working directory become
 * `instruction` items (source `agents_md`, name = path) at the start of a session's first
 * turn, outermost first, within a total size limit, and reach the first model request.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { realpath } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LocalFileSystem } from '../../src/executors/local/local-file-system.js';
import type { Item, ItemOf } from '../../src/protocol/index.js';
import { collectAgentsMd, findRepositoryRoot } from '../../src/runtime/instructions/agents-md.js';
import { startInProcessServer, type InProcessServer } from '../helpers/in-process-server.js';

let harness: InProcessServer | undefined;
const directories: string[] = [];
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
});

function write(file: string, text: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
}

describe('AGENTS.md in a conversation', () => {
  it('records the files from the repository root to the working directory, in order, before the first prompt', async () => {
    harness = await startInProcessServer(
      `
responses:
  - text: "read them"
  - text: "second answer"
`,
      {
        beforeStart: ({ root, workDir }) => {
          // Above the repository: must not be read.
          write(path.join(root, 'AGENTS.md'), 'OUTSIDE-0: not part of the repository\n');
          mkdirSync(path.join(workDir, '.git'));
          write(path.join(workDir, 'AGENTS.md'), 'ROOT-RULES-1: use pnpm\n');
          write(path.join(workDir, 'packages', 'AGENTS.md'), 'PACKAGES-RULES-2: each package has its own tests\n');
          mkdirSync(path.join(workDir, 'packages', 'api', 'src'), { recursive: true });
          write(path.join(workDir, 'packages', 'api', 'src', 'AGENTS.md'), 'API-RULES-3: keep handlers small\n');
          // Below the working directory: not on the path, not read.
          write(path.join(workDir, 'packages', 'api', 'src', 'deeper', 'AGENTS.md'), 'DEEPER-4\n');
        },
      },
    );
    const { workDir } = harness.environment;
    const cwd = path.join(workDir, 'packages', 'api', 'src');
    const { conversation } = await harness.client.request('conversation/create', { cwd });
    await harness.client.request('conversation/subscribe', { conversationId: conversation.id });
    await harness.client.request('session/input', { conversationId: conversation.id, input: 'FIRST-PROMPT' });
    await harness.turnsCompleted(1);

    const items = harness.completedItems();
    const instructions = items.filter((item): item is ItemOf<'instruction'> => item.kind === 'instruction');
    expect(instructions.map((item) => [item.source, item.name])).toEqual([
      ['agents_md', path.join(workDir, 'AGENTS.md')],
      ['agents_md', path.join(workDir, 'packages', 'AGENTS.md')],
      ['agents_md', path.join(cwd, 'AGENTS.md')],
    ]);
    expect(instructions[2]?.body).toBe('API-RULES-3: keep handlers small\n');
    expect(items.map((item: Item) => item.kind).slice(0, 4)).toEqual(['instruction', 'instruction', 'instruction', 'user_message']);

    const first = JSON.stringify(harness.environment.mock.requests[0]?.body);
    const positions = ['ROOT-RULES-1', 'PACKAGES-RULES-2', 'API-RULES-3', 'FIRST-PROMPT'].map((marker) => first.indexOf(marker));
    expect(positions.every((position) => position >= 0)).toBe(true);
    expect([...positions].sort((left, right) => left - right)).toEqual(positions);
    expect(first).not.toContain('OUTSIDE-0');
    expect(first).not.toContain('DEEPER-4');

    // Only the first turn records them; later requests still carry them.
    await harness.client.request('session/input', { conversationId: conversation.id, input: 'SECOND-PROMPT' });
    await harness.turnsCompleted(2);
    expect(harness.completedItems().filter((item) => item.kind === 'instruction')).toHaveLength(3);
    expect(JSON.stringify(harness.environment.mock.requests[1]?.body)).toContain('ROOT-RULES-1');
  });
});

describe('collectAgentsMd', () => {
  async function tempDirectory(): Promise<string> {
    const directory = await realpath(mkdtempSync(path.join(os.tmpdir(), 'openvaala-agents-md-')));
    directories.push(directory);
    return directory;
  }

  it('reads only the working directory when no ancestor holds .git, and takes a .git file as a root', async () => {
    const base = await tempDirectory();
    write(path.join(base, 'AGENTS.md'), 'parent\n');
    write(path.join(base, 'project', 'AGENTS.md'), 'own\n');
    const fileSystem = new LocalFileSystem();
    expect((await collectAgentsMd(fileSystem, path.join(base, 'project'))).map((file) => file.body)).toEqual(['own\n']);
    write(path.join(base, '.git'), 'gitdir: /elsewhere/.git/worktrees/x\n');
    expect(await findRepositoryRoot(fileSystem, path.join(base, 'project'))).toBe(base);
    expect((await collectAgentsMd(fileSystem, path.join(base, 'project'))).map((file) => file.body)).toEqual(['parent\n', 'own\n']);
  });

  it('cuts at the total limit and says so, in the cut file and in the files left out', async () => {
    const base = await tempDirectory();
    mkdirSync(path.join(base, '.git'));
    write(path.join(base, 'AGENTS.md'), 'a'.repeat(60));
    write(path.join(base, 'one', 'AGENTS.md'), 'b'.repeat(60));
    write(path.join(base, 'one', 'two', 'AGENTS.md'), 'c'.repeat(10));
    const files = await collectAgentsMd(new LocalFileSystem(), path.join(base, 'one', 'two'), 100);
    expect(files.map((file) => file.truncated)).toEqual([false, true, true]);
    expect(files[0]?.body).toBe('a'.repeat(60));
    expect(files[1]?.body).toMatch(/^b{40}\n\[… truncated: AGENTS\.md files are limited to 100 bytes in total; 20 bytes of this file were left out …\]$/);
    expect(files[2]?.body).toBe('[not included: 10 bytes; AGENTS.md files are limited to 100 bytes in total and the files above used them all]');
  });
});
