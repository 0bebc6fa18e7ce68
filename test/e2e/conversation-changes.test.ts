/**
 * `openvaala conversations rename | archive | unarchive | delete | fork` as real processes
 * against a real server, with the mock provider over HTTP: each change is read back through
 * `conversations list` / `show`, the data directory, or a real `exec --resume`; a delete is
 * confirmed on a terminal or with --yes and never happens silently; a reference that is unknown
 * or fits several conversations is refused naming it.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { spawn as spawnPty } from 'node-pty';
import { afterEach, describe, expect, it } from 'vitest';
import { RuntimeClient } from '../../src/client/runtime-client.js';
import { CLI_EXECUTABLE } from '../../src/package-info.js';
import { createTestEnvironment, runCli, spawnCli, startServe, stopBackgroundServer, type ServeProcess, type TestEnvironment } from '../helpers/environment.js';
import { until } from '../helpers/processes.js';

let environment: TestEnvironment | undefined;
let serve: ServeProcess | undefined;

afterEach(async () => {
  await serve?.stop();
  serve = undefined;
  if (environment) {
    await stopBackgroundServer(environment);
    await environment.dispose();
  }
  environment = undefined;
});

type Listed = { id: string; title: string; archived: boolean };

/** A running server with two conversations made by `exec`: "fix the parser", then "update the documentation". */
async function twoConversations(...more: string[]): Promise<{ options: { env: NodeJS.ProcessEnv; cwd: string }; parser: string; docs: string }> {
  const answers = ['The parser is fixed.', 'The docs are updated.', ...more];
  environment = await createTestEnvironment(`responses:\n${answers.map((text) => `  - text: ${JSON.stringify(text)}\n`).join('')}`);
  serve = await startServe(environment);
  const options = { env: environment.env, cwd: environment.workDir };
  expect((await runCli(['exec', 'fix the parser'], options)).code).toBe(0);
  expect((await runCli(['exec', 'update the documentation'], options)).code).toBe(0);
  const [docs, parser] = await listed(options);
  return { options, parser: parser!.id, docs: docs!.id };
}

/** `conversations list --json` (with `extra` options), parsed. */
async function listed(options: { env: NodeJS.ProcessEnv }, ...extra: string[]): Promise<Listed[]> {
  const result = await runCli(['conversations', 'list', '--json', ...extra], options);
  expect(result.code, result.stderr).toBe(0);
  return JSON.parse(result.stdout) as Listed[];
}

/** The shortest prefix of `id` that no other of `ids` starts with, plus one character. */
function uniquePrefix(id: string, ids: string[]): string {
  let length = 6;
  while (ids.some((other) => other !== id && other.startsWith(id.slice(0, length)))) length += 1;
  return id.slice(0, length + 1);
}

/** Runs `conversations delete REFERENCE` on a terminal and answers its question with `answer`. */
async function deleteOnTerminal(reference: string, answer: string, options: { env: NodeJS.ProcessEnv; cwd: string }): Promise<{ code: number; screen: string }> {
  const terminal = spawnPty(process.execPath, [CLI_EXECUTABLE, 'conversations', 'delete', reference], { env: options.env as Record<string, string>, cwd: options.cwd, cols: 200, rows: 20 });
  let screen = '';
  terminal.onData((data) => (screen += data));
  const exited = new Promise<number>((resolve) => terminal.onExit(({ exitCode }) => resolve(exitCode)));
  await until(() => screen.includes('[y/N]'), 20_000, 'the delete question');
  terminal.write(`${answer}\r`);
  return { code: await exited, screen };
}

describe('openvaala conversations: changes', { timeout: 120_000 }, () => {
  it('renames, archives and unarchives, by id, prefix and last, as list and show read it back', async () => {
    const { options, parser, docs } = await twoConversations();
    const renamed = await runCli(['conversations', 'rename', uniquePrefix(parser, [parser, docs]), 'Parser: the fix'], options);
    expect(renamed.stderr).toBe('');
    expect(renamed.code).toBe(0);
    expect(renamed.stdout).toBe(`renamed ${parser} to "Parser: the fix" (was "fix the parser")\n`);
    expect((await listed(options)).find((entry) => entry.id === parser)?.title).toBe('Parser: the fix');
    const asJson = await runCli(['conversations', 'rename', parser, 'Parser fix', '--json'], options);
    expect(JSON.parse(asJson.stdout)).toMatchObject({ conversation: { id: parser, title: 'Parser fix' } });
    expect((await runCli(['conversations', 'show', parser], options)).stdout).toContain(`conversation ${parser}: Parser fix\n`);
    // A blank title is a mistake, not a title; one over the protocol's limit is refused naming the param.
    const blank = await runCli(['conversations', 'rename', parser, '  '], options);
    expect(blank.code).toBe(64);
    expect(blank.stderr).toContain('<title> must not be empty');
    const long = await runCli(['conversations', 'rename', parser, 'x'.repeat(300)], options);
    expect(long.code).toBe(64);
    // Said in the command's terms: its <title> argument, not the protocol's method and key path.
    expect(long.stderr).toContain(`conversations rename: ${parser}: <title>: at most 200 characters (got 300)`);
    expect((await listed(options)).find((entry) => entry.id === parser)?.title).toBe('Parser fix');

    const archived = await runCli(['conversations', 'archive', 'last'], options);
    expect(archived.code).toBe(0);
    expect(archived.stdout).toBe(`archived ${docs}: update the documentation\n`);
    expect(archived.stderr).toContain(`it is left out of the list now (openvaala conversations list --archived shows it); bring it back with: openvaala conversations unarchive ${docs}\n`);
    expect((await listed(options)).map((entry) => entry.id)).toEqual([parser]);
    expect((await listed(options, '--archived')).map((entry) => [entry.id, entry.archived])).toEqual([[docs, true]]);
    expect((await runCli(['conversations', 'search', 'documentation', '--archived'], options)).stdout).toContain(docs);
    expect((await runCli(['conversations', 'show', docs], options)).code).toBe(0);
    const again = await runCli(['conversations', 'archive', docs, '--json'], options);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ conversation: { id: docs, archived: true } });
    expect((await runCli(['conversations', 'archive', docs], options)).stdout).toBe(`${docs} is already archived: update the documentation\n`);

    // `last` of unarchive is the archived conversation updated last, not the newest listed one.
    const unarchived = await runCli(['conversations', 'unarchive', 'last'], options);
    expect(unarchived.code).toBe(0);
    expect(unarchived.stdout).toBe(`unarchived ${docs}: update the documentation\n`);
    expect((await listed(options)).map((entry) => entry.id).sort()).toEqual([parser, docs].sort());
    expect(await listed(options, '--archived')).toEqual([]);
    const none = await runCli(['conversations', 'unarchive', 'last'], options);
    expect(none.code).toBe(64);
    expect(none.stderr).toContain('there is no archived conversation');
    expect((await runCli(['conversations', 'list', '--archived'], options)).stderr).toContain('no archived conversations');
  });

  it('forks all of a conversation, up to a turn or up to an item; the printed command continues the fork', async () => {
    const { options, parser, docs } = await twoConversations('Continued in the fork.');
    const forked = await runCli(['conversations', 'fork', parser], options);
    expect(forked.code, forked.stderr).toBe(0);
    const forkId = /^forked (conv_\w+) into (conv_\w+): fix the parser \(fork\)\n$/.exec(forked.stdout);
    expect(forkId?.[1]).toBe(parser);
    const fork = forkId![2]!;
    const command = `openvaala exec --resume ${fork} "…"`;
    expect(forked.stderr).toBe(`continue it with: ${command}\n`);
    const shown = await runCli(['conversations', 'show', fork], options);
    expect(shown.stdout).toContain('› fix the parser');
    expect(shown.stdout).toContain('The parser is fixed.');
    expect(shown.stdout).not.toContain('update the documentation');

    // The printed command, run as printed, continues the fork with the source's history.
    const resumed = await runCli(['exec', '--resume', fork, 'and the tests?'], options);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain('Continued in the fork.');
    const request = JSON.stringify(environment!.mock.requests.at(-1)?.body);
    expect(request).toContain('fix the parser');
    expect(request).toContain('The parser is fixed.');
    expect(request).not.toContain('update the documentation');

    const source = JSON.parse((await runCli(['conversations', 'show', docs, '--json'], options)).stdout) as { turns: { id: string }[]; items: { id: string; type: string }[] };
    const byTurn = await runCli(['conversations', 'fork', docs, '--turn', source.turns[0]!.id, '--json'], options);
    expect(byTurn.code, byTurn.stderr).toBe(0);
    const turnFork = JSON.parse(byTurn.stdout) as { conversation: { id: string; forkedFrom: { conversationId: string; itemId: string } } };
    expect(turnFork.conversation.forkedFrom).toEqual({ conversationId: docs, itemId: source.items.at(-1)!.id });
    expect(byTurn.stderr).toContain(`openvaala exec --resume ${turnFork.conversation.id} "…"`);
    const firstItem = source.items[0]!;
    const byItem = JSON.parse((await runCli(['conversations', 'fork', docs, '--at', firstItem.id, '--json'], options)).stdout) as { conversation: { id: string } };
    const itemFork = JSON.parse((await runCli(['conversations', 'show', byItem.conversation.id, '--json'], options)).stdout) as { items: { type: string }[] };
    expect(itemFork.items.map((item) => item.type)).toEqual([firstItem.type]);
    expect((await listed(options)).map((entry) => entry.id)).toEqual(expect.arrayContaining([fork, turnFork.conversation.id, byItem.conversation.id]));

    const unknownItem = await runCli(['conversations', 'fork', 'last', '--at', 'item_nope'], options);
    expect(unknownItem.code).toBe(64);
    expect(unknownItem.stderr).toMatch(/conversations fork: last \(conv_\w+\): --at item_nope: item "item_nope" is not stored/);
    const unknownTurn = await runCli(['conversations', 'fork', 'last', '--turn', 'turn_nope'], options);
    expect(unknownTurn.code).toBe(64);
    expect(unknownTurn.stderr).toMatch(/conversations fork: last \(conv_\w+\): --turn turn_nope: conversation conv_\w+ has no turn "turn_nope"\n/);
    const both = await runCli(['conversations', 'fork', parser, '--at', firstItem.id, '--turn', source.turns[0]!.id], options);
    expect(both.code).toBe(64);
    expect(both.stderr).toContain('give --at or --turn, not both');
  });

  it('deletes with --yes; without a terminal and --yes, or with last and --yes, deletes nothing', async () => {
    const { options, parser, docs } = await twoConversations();
    const unasked = await runCli(['conversations', 'delete', parser], options);
    expect(unasked.code).toBe(64);
    expect(unasked.stderr).toContain(`not deleting ${parser}: there is no terminal to confirm on; pass --yes`);
    const lastYes = await runCli(['conversations', 'delete', 'last', '--yes'], options);
    expect(lastYes.code).toBe(64);
    expect(lastYes.stderr).toContain('not deleting last with --yes');
    expect((await listed(options)).map((entry) => entry.id).sort()).toEqual([parser, docs].sort());

    const conversations = path.join(environment!.paths.dataDir, 'conversations');
    expect(existsSync(path.join(conversations, parser))).toBe(true);
    const deleted = await runCli(['conversations', 'delete', uniquePrefix(parser, [parser, docs]), '--yes'], options);
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(deleted.stdout).toBe(`deleted ${parser}: fix the parser\n`);
    expect((await listed(options)).map((entry) => entry.id)).toEqual([docs]);
    expect(existsSync(path.join(conversations, parser))).toBe(false);
    const gone = await runCli(['conversations', 'show', parser], options);
    expect(gone.code).toBe(64);
    expect(gone.stderr).toContain(`there is no conversation "${parser}"`);
    const asJson = await runCli(['conversations', 'delete', docs, '-y', '--json'], options);
    expect(JSON.parse(asJson.stdout)).toEqual({ conversationId: docs });
    expect(await listed(options)).toEqual([]);
  });

  it('asks on a terminal, showing id and title: only y deletes', async () => {
    const { options, parser, docs } = await twoConversations();
    const ask = (answer: string) => deleteOnTerminal('last', answer, options);
    const kept = await ask('n');
    expect(kept.screen).toContain(`delete conversation ${docs} "update the documentation"`);
    expect(kept.screen).toContain('1 turn, updated ');
    expect(kept.screen).toContain(`not deleted: ${docs}`);
    expect(kept.code).toBe(1);
    expect((await ask('')).code).toBe(1);
    expect((await listed(options)).map((entry) => entry.id).sort()).toEqual([parser, docs].sort());
    const confirmed = await ask('y');
    expect(confirmed.code).toBe(0);
    expect(confirmed.screen).toContain(`deleted ${docs}: update the documentation`);
    expect((await listed(options)).map((entry) => entry.id)).toEqual([parser]);
  });

  it('says at the question that a running turn is interrupted, and deleting interrupts it', async () => {
    environment = await createTestEnvironment('responses:\n  - deltas: ["working ", "on it"]\n    holds: [{ afterDeltas: 1, gate: busy }]\n');
    serve = await startServe(environment);
    const options = { env: environment.env, cwd: environment.workDir };
    const running = spawnCli(['exec', 'a long task'], options);
    try {
      await environment.mock.waitForHold('busy', 20_000);
      const asked = await deleteOnTerminal('last', 'y', options);
      expect(asked.screen).toContain('a turn is running in it: it is interrupted');
      expect(asked.code).toBe(0);
      const ended = await running.done;
      expect(ended.code).not.toBe(0);
      expect(await listed(options)).toEqual([]);
    } finally {
      running.child.kill('SIGKILL');
    }
  });

  it('refuses a conversation in a git worktree unless --remove-worktree, naming the worktree', async () => {
    environment = await createTestEnvironment('responses: []\n');
    serve = await startServe(environment);
    const repository = path.join(environment.root, 'repository');
    mkdirSync(repository);
    const git = (args: string[]) => execFileSync('git', args, { cwd: repository, env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_AUTHOR_NAME: 'Ada', GIT_AUTHOR_EMAIL: 'ada@example.org', GIT_COMMITTER_NAME: 'Ada', GIT_COMMITTER_EMAIL: 'ada@example.org' } });
    git(['init', '-q', '-b', 'main']);
    writeFileSync(path.join(repository, 'notes.txt'), 'one\n');
    git(['add', 'notes.txt']);
    git(['commit', '-q', '-m', 'Start']);
    const client = await RuntimeClient.connect({ url: serve.info.url, token: serve.info.token, clientName: 'worktree-test' });
    const { conversation } = await client.request('conversation/create', { cwd: repository, worktree: {} }).finally(() => client.close());
    const worktree = conversation.worktree!;
    expect(existsSync(worktree.path)).toBe(true);
    const options = { env: environment.env, cwd: environment.workDir };
    const refused = await runCli(['conversations', 'delete', conversation.id, '--yes'], options);
    expect(refused.code).toBe(64);
    expect(refused.stderr).toContain(`${conversation.id}: the conversation works in the git worktree ${worktree.path} (branch ${worktree.branch}); pass --remove-worktree`);
    expect(existsSync(worktree.path)).toBe(true);
    const deleted = await runCli(['conversations', 'delete', conversation.id, '--yes', '--remove-worktree'], options);
    expect(deleted.code, deleted.stderr).toBe(0);
    expect(existsSync(worktree.path)).toBe(false);
  });

  it('refuses an unknown or ambiguous reference in every subcommand, naming it', async () => {
    const { options, parser, docs } = await twoConversations();
    const commands = [['rename', '{ref}', 'New title'], ['archive', '{ref}'], ['unarchive', '{ref}'], ['delete', '{ref}', '--yes'], ['fork', '{ref}']];
    for (const command of commands) {
      for (const [reference, expected] of [
        ['conv_zzzz', 'there is no conversation "conv_zzzz"'],
        ['conv_', '"conv_" fits several conversations'],
      ] as const) {
        const args = ['conversations', ...command.map((word) => (word === '{ref}' ? reference : word))];
        const result = await runCli(args, options);
        expect(result.code, args.join(' ')).toBe(64);
        expect(result.stderr, args.join(' ')).toContain(`openvaala: conversations ${command[0]}: ${expected}`);
      }
    }
    const after = await listed(options);
    expect(after.map((entry) => [entry.id, entry.title]).sort()).toEqual([[docs, 'update the documentation'], [parser, 'fix the parser']].sort());
  });
});
