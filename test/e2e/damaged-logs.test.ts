/**
 * Damaged conversation logs as users meet them (SPEC §4; docs/storage.md): with the server
 * stopped, a session log is replaced by something that cannot be read, lines are cut or
 * garbage is appended, or `metadata.jsonl` is emptied. `reindex` reports what it left out and
 * indexes the rest; `conversations show`, `export` and `exec --resume` name the file and the
 * damage instead of an internal error, and warn about every entry they skipped.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestEnvironment, runCli, stopBackgroundServer, type TestEnvironment } from '../helpers/environment.js';

const environments: TestEnvironment[] = [];
afterEach(async () => {
  for (const environment of environments.splice(0)) {
    await stopBackgroundServer(environment);
    await environment.dispose();
  }
});

/** An installation with one stored conversation of `turns` turns, its server stopped. */
async function storedConversation(turns = 1, spareAnswers = 0): Promise<{ environment: TestEnvironment; conversationId: string; directory: string; sessionLog: string; metadataLog: string }> {
  const environment = await createTestEnvironment(`responses:\n${Array.from({ length: turns + spareAnswers }, (_, turn) => `  - text: "Answer ${turn + 1}."\n`).join('')}`);
  environments.push(environment);
  const first = await runCli(['exec', 'Plan the release'], { env: environment.env, cwd: environment.workDir });
  expect(first.code).toBe(0);
  for (let turn = 2; turn <= turns; turn += 1) expect((await runCli(['exec', '--resume', 'last', `Step ${turn}`], { env: environment.env, cwd: environment.workDir })).code).toBe(0);
  await stopBackgroundServer(environment);
  const conversations = path.join(environment.paths.dataDir, 'conversations');
  const [conversationId] = fs.readdirSync(conversations);
  const directory = path.join(conversations, conversationId as string);
  const session = fs.readdirSync(directory).find((name) => name.startsWith('sess_')) as string;
  return { environment, conversationId: conversationId as string, directory, sessionLog: path.join(directory, session), metadataLog: path.join(directory, 'metadata.jsonl') };
}

/**
 * How the command line names a file of the data directory: by its path. The server writes
 * `<data dir>/` instead of the directory to its clients; a command that found the server on its
 * own data directory writes the path back (reindex runs locally and names it whole).
 */
const asPrinted = (environment: { paths: { dataDir: string } }, file: string): string => path.join(environment.paths.dataDir, path.relative(environment.paths.dataDir, file));

describe('a session log that cannot be read', { timeout: 120_000 }, () => {
  it('is reported by reindex, which indexes the rest; show, export and exec --resume name it and leave it as it is', async () => {
    const { environment, conversationId, sessionLog } = await storedConversation();
    fs.rmSync(sessionLog);
    fs.mkdirSync(sessionLog);

    const reindexed = await runCli(['reindex'], { env: environment.env });
    expect(reindexed.stderr).toBe('');
    expect(reindexed.code).toBe(0);
    expect(reindexed.stdout).toContain('indexed 1 conversation');
    expect(reindexed.stdout).toContain(`log file ${sessionLog} cannot be read: it is a directory`);

    const expected = `conversation "${conversationId}" cannot be opened: log file ${asPrinted(environment, sessionLog)} cannot be read: it is a directory`;
    for (const args of [['conversations', 'show', conversationId], ['export', conversationId], ['exec', '--resume', conversationId, 'Go on']]) {
      const result = await runCli(args, { env: environment.env, cwd: environment.workDir });
      expect(result.stderr, args.join(' ')).toContain(expected);
      expect(result.stderr).not.toContain('internal error');
      expect(result.code).toBe(1);
    }
    expect(fs.lstatSync(sessionLog).isDirectory()).toBe(true);
    expect(environment.mock.requests).toHaveLength(1);

    // A named pipe in its place: named as such, and no reader waits for a writer.
    await stopBackgroundServer(environment);
    fs.rmdirSync(sessionLog);
    execFileSync('mkfifo', [sessionLog]);
    const rebuilt = await runCli(['reindex'], { env: environment.env, timeoutMs: 20_000 });
    expect(rebuilt.stdout).toContain(`log file ${sessionLog} cannot be read: it is a named pipe (FIFO)`);
    const shown = await runCli(['conversations', 'show', conversationId], { env: environment.env, timeoutMs: 20_000 });
    expect(shown.stderr).toContain(`log file ${asPrinted(environment, sessionLog)} cannot be read: it is a named pipe (FIFO)`);
    expect(fs.lstatSync(sessionLog).isFIFO()).toBe(true);
  });
});

describe('damaged lines', { timeout: 120_000 }, () => {
  it('are named, file and line, by conversations show, export and exec --resume', async () => {
    const { environment, conversationId, sessionLog, metadataLog } = await storedConversation(2, 1);
    const session = fs.readFileSync(sessionLog);
    const lastLineStart = session.subarray(0, -1).lastIndexOf(0x0a) + 1;
    fs.writeFileSync(sessionLog, session.subarray(0, -10));
    const metadataLines = fs.readFileSync(metadataLog, 'utf8').split('\n').length;
    fs.appendFileSync(metadataLog, 'garbage that is not JSON\n');

    const shown = await runCli(['conversations', 'show', conversationId], { env: environment.env });
    expect(shown.code).toBe(0);
    expect(shown.stdout).toContain('Answer 1.');
    expect(shown.stderr).toContain(`warning: damaged log ${asPrinted(environment, sessionLog)}, byte offset ${lastLineStart}: incomplete last line`);
    expect(shown.stderr).toContain(`warning: damaged log ${asPrinted(environment, metadataLog)}, line ${metadataLines} (byte offset`);

    const exported = await runCli(['export', conversationId], { env: environment.env });
    expect(exported.code).toBe(0);
    expect(exported.stderr).toContain(`warning: damaged log ${asPrinted(environment, sessionLog)}, byte offset ${lastLineStart}`);
    expect(exported.stderr).toContain(`warning: damaged log ${asPrinted(environment, metadataLog)}, line ${metadataLines}`);
    expect(exported.stderr).toContain(`exported conversation ${conversationId}`);

    // Continuing it works, and says what of its history was skipped before the new turn's output.
    const resumed = await runCli(['exec', '--resume', conversationId, 'Go on'], { env: environment.env, cwd: environment.workDir });
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toContain('Answer 3.');
    expect(resumed.stderr).toContain(`warning: damaged log ${asPrinted(environment, metadataLog)}, line ${metadataLines}`);
  });
});

describe('a metadata log without a valid conversation entry', { timeout: 120_000 }, () => {
  it.each([
    ['emptied', (): Buffer => Buffer.alloc(0)],
    ['replaced with random bytes', (): Buffer => Buffer.from(Array.from({ length: 300 }, (_, index) => (index * 37 + 11) % 256))],
  ])('%s: show names the file, the listing drops it and reindex reports it', async (_label, content) => {
    const { environment, conversationId, metadataLog } = await storedConversation();
    fs.writeFileSync(metadataLog, content());

    const shown = await runCli(['conversations', 'show', conversationId], { env: environment.env });
    expect(shown.stderr).toContain(`conversation "${conversationId}" cannot be opened: its metadata log ${asPrinted(environment, metadataLog)} holds no valid conversation entry`);
    expect(shown.stderr).not.toContain('does not exist');
    expect(shown.code).toBe(1);
    const listed = await runCli(['conversations', '--json'], { env: environment.env });
    expect(JSON.parse(listed.stdout)).toEqual([]);

    await stopBackgroundServer(environment);
    const reindexed = await runCli(['reindex'], { env: environment.env });
    expect(reindexed.code).toBe(0);
    expect(reindexed.stdout).toContain(`skipped ${conversationId}: its metadata log ${metadataLog} holds no valid conversation entry`);
    expect(fs.readFileSync(metadataLog)).toEqual(content());
  });
});
