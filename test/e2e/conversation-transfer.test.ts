/**
 * `openvaala export` and `openvaala import` (SPEC §2) as real processes against servers they
 * start in the background, with the mock provider over HTTP: a conversation moves from one
 * installation to another and continues there; a Codex session rollout from the shared
 * fixtures imports and continues with a new turn; importing either a second time is refused,
 * naming the conversation, unless `--as-new` asks for a copy; a damaged archive is refused
 * naming the line.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fromCodexId } from '../../src/protocol/codex-ids.js';
import { createTestEnvironment, runCli, stopBackgroundServer, type TestEnvironment } from '../helpers/environment.js';

/** Read from the project root, as the other fixture tests do; a missing file fails the test. */
const ROLLOUT = path.resolve('../shared/fixtures/codex-rollout/rollout-two-commands.jsonl');

const environments: TestEnvironment[] = [];
afterEach(async () => {
  for (const environment of environments.splice(0)) {
    await stopBackgroundServer(environment);
    await environment.dispose();
  }
});

async function environmentAnswering(...texts: string[]): Promise<TestEnvironment> {
  const environment = await createTestEnvironment(`responses:\n${texts.map((text) => `  - text: ${JSON.stringify(text)}\n`).join('')}`);
  environments.push(environment);
  return environment;
}

describe('openvaala export / import', { timeout: 120_000 }, () => {
  it('moves a conversation to another installation, where it is listed and continues', async () => {
    const source = await environmentAnswering('First answer.');
    const target = await environmentAnswering('Continued on the other server.');
    const first = await runCli(['exec', 'Plan the release'], { env: source.env, cwd: source.workDir });
    expect(first.code).toBe(0);

    const exported = await runCli(['export', 'last'], { env: source.env });
    expect(exported.code).toBe(0);
    const manifest = JSON.parse(exported.stdout.split('\n')[0] as string) as { conversationId: string };
    const conversationId = manifest.conversationId;
    expect(exported.stderr).toContain(`exported conversation ${conversationId}`);
    // A unique prefix names the same conversation.
    const byPrefix = await runCli(['export', conversationId.slice(0, 12)], { env: source.env });
    expect(byPrefix.stdout.split('\n').slice(1)).toEqual(exported.stdout.split('\n').slice(1));
    const archive = path.join(target.root, 'conversation.jsonl');
    writeFileSync(archive, exported.stdout);

    const imported = await runCli(['import', archive], { env: target.env });
    expect(imported.stderr).toContain(`imported "`);
    expect(imported.code).toBe(0);
    expect(imported.stdout).toBe(`${conversationId}\n`);
    const listing = await runCli(['conversations'], { env: target.env });
    expect(listing.stdout).toContain(conversationId);

    const resumed = await runCli(['exec', '--resume', conversationId, 'And then?'], { env: target.env, cwd: target.workDir });
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toContain('Continued on the other server.');
    const request = JSON.stringify(target.mock.requests[0]?.body);
    expect(request).toContain('Plan the release');
    expect(request).toContain('First answer.');

    // The same archive again is refused, naming the conversation it would duplicate; a copy is asked for with --as-new.
    const again = await runCli(['import', archive], { env: target.env });
    expect(again.code).toBe(64);
    expect(again.stdout).toBe('');
    expect(again.stderr).toBe(`openvaala: import: ${archive}: conversation ${conversationId} ("Plan the release") is stored here already; give --as-new to import a copy under new ids\n`);
    expect((JSON.parse((await runCli(['conversations', '--json'], { env: target.env })).stdout) as unknown[]).length).toBe(1);
    const copy = await runCli(['import', '--as-new', archive], { env: target.env });
    expect(copy.code).toBe(0);
    expect(copy.stdout.trim()).toMatch(/^conv_/);
    expect(copy.stdout.trim()).not.toBe(conversationId);
    expect(copy.stderr).toContain(`imported "Plan the release" as ${copy.stdout.trim()}: `);
    expect(copy.stderr).toContain(`(a copy of conversation ${conversationId}, under new ids)`);

    const damaged = path.join(target.root, 'damaged.jsonl');
    const lines = exported.stdout.split('\n');
    writeFileSync(damaged, [lines[0], lines[1]?.slice(0, 20), ...lines.slice(2)].join('\n'));
    const refused = await runCli(['import', damaged], { env: target.env });
    expect(refused.code).toBe(64);
    expect(refused.stderr).toContain(`openvaala: import: ${damaged}: line 2: not valid JSON`);
    // A binary file: the parser's excerpt of it is printed with its control characters escaped.
    const binary = path.join(target.root, 'photo.zip');
    writeFileSync(binary, Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x14, 0x00, 0x1b, 0x5b, 0x32, 0x4a, 0xff, 0xfe, 0x0a, 0x41]));
    for (const args of [['import', binary], ['import', '--from', 'codex', binary]]) {
      const garbage = await runCli(args, { env: target.env });
      expect(garbage.code, args.join(' ')).toBe(64);
      expect(garbage.stderr, args.join(' ')).toContain(`${binary}: line 1: not valid JSON (Unexpected token 'P', "PK\\u0003\\u0004\\u0014\\u0000\\u001b[2J`);
      // Control characters are what this pattern looks for.
      // eslint-disable-next-line no-control-regex
      expect(garbage.stderr, args.join(' ')).not.toMatch(/[\u0000-\u0008\u000b-\u001f\ufffd]/);
    }
    const after = await runCli(['conversations', '--json'], { env: target.env });
    expect((JSON.parse(after.stdout) as unknown[]).length).toBe(2);

    const misused = await runCli(['import', archive, '--model', 'mock/mock-model'], { env: target.env });
    expect(misused.code).toBe(64);
    expect(misused.stderr).toContain('--model only applies with --from');

    const unknown = await runCli(['export', 'conv_nothing'], { env: target.env });
    expect(unknown.code).toBe(64);
    expect(unknown.stderr).toContain('there is no conversation "conv_nothing"');
  });

  it('imports a Codex session rollout, which continues with a new turn that sees its history', async () => {
    const environment = await environmentAnswering('Both steps ran; nothing else to do.');
    const imported = await runCli(['import', '--from', 'codex', ROLLOUT, '--cwd', environment.workDir], { env: environment.env });
    expect(imported.stderr).toContain('imported "run the two steps"');
    expect(imported.stderr).toContain('4 items');
    expect(imported.code).toBe(0);
    const conversationId = imported.stdout.trim();

    const shown = await runCli(['conversations', 'show', conversationId], { env: environment.env });
    expect(shown.stdout).toContain('run the two steps');
    expect(shown.stdout).toContain('Done after 2 steps.');

    const resumed = await runCli(['exec', '--resume', conversationId, 'Did both steps succeed?'], { env: environment.env, cwd: environment.workDir });
    expect(resumed.code).toBe(0);
    expect(resumed.stdout).toContain('Both steps ran; nothing else to do.');
    const request = JSON.stringify(environment.mock.requests[0]?.body);
    for (const expected of ['run the two steps', 'exec_command', 'echo step-0', 'Process exited with code 0', 'Done after 2 steps.', 'Did both steps succeed?']) expect(request).toContain(expected);

    // The conversation takes the Codex session's id (the Codex id rule), so the same rollout again is refused like an archive.
    const codexThread = JSON.parse(readFileSync(ROLLOUT, 'utf8').split('\n')[0] as string).payload.id as string;
    expect(conversationId).toBe(fromCodexId(codexThread, 'conv'));
    const twice = await runCli(['import', '--from', 'codex', ROLLOUT, '--cwd', environment.workDir], { env: environment.env });
    expect(twice.code).toBe(64);
    expect(twice.stderr).toBe(`openvaala: import: ${ROLLOUT}: conversation ${conversationId} ("run the two steps") is stored here already; give --as-new to import a copy under new ids\n`);

    const notRollout = await runCli(['import', '--from', 'codex', path.join(environment.root, 'missing.jsonl')], { env: environment.env });
    expect(notRollout.code).toBe(64);
    expect(notRollout.stderr).toContain('cannot read');
 
    // An agent or a model that no later turn could use is refused before anything is imported.
    const before = (await runCli(['conversations', '--json'], { env: environment.env })).stdout;
    const ghost = await runCli(['import', '--from', 'codex', ROLLOUT, '--agent', 'ghost'], { env: environment.env });
    expect(ghost.code).toBe(64);
    expect(ghost.stderr).toContain('--agent: agent "ghost" is not defined in agents.yaml');
    const nonsense = await runCli(['import', '--from', 'codex', ROLLOUT, '--model', 'nonsense'], { env: environment.env });
    expect(nonsense.code).toBe(64);
    expect(nonsense.stderr).toContain('--model: "nonsense" must be named "<provider>/<model-id>"');
    const mistyped = path.join(environment.root, 'no-such-project');
    const nowhere = await runCli(['import', '--from', 'codex', ROLLOUT, '--cwd', mistyped], { env: environment.env });
    expect(nowhere.code).toBe(64);
    expect(nowhere.stderr).toContain(`--cwd ${mistyped}: no such directory; give the working directory the conversation continues in`);
    expect((await runCli(['conversations', '--json'], { env: environment.env })).stdout).toBe(before);

    // A provider no configured provider lists is warned about (a provider may serve models it does not list).
    const unlisted = await runCli(['import', '--as-new', '--from', 'codex', ROLLOUT, '--cwd', environment.workDir, '--model', 'nosuch/m'], { env: environment.env });
    expect(unlisted.code).toBe(0);
    expect(unlisted.stderr).toContain('warning: --model nosuch/m: no configured provider "nosuch" lists models (providers listing models: mock)');
    const listed = await runCli(['import', '--as-new', '--from', 'codex', ROLLOUT, '--cwd', environment.workDir, '--model', 'mock/mock-model'], { env: environment.env });
    expect(listed.stderr).not.toContain('warning');

    // Without --cwd, the rollout's own directory (another machine's /home/user/...) is kept, and said to be missing here.
    const elsewhere = await runCli(['import', '--as-new', '--from', 'codex', ROLLOUT], { env: environment.env });
    expect(elsewhere.code).toBe(0);
    expect(elsewhere.stderr).toMatch(/warning: the rollout's working directory \/home\/user\/\S+ does not exist here; its turns will fail until it does \(import with --cwd to continue elsewhere\)/);
  });
});
