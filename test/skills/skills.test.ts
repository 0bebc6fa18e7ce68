/**
 * Skills in a real in-process server with the scripted mock model: the catalog reaches the
 * first request, `load_skill` and a `$name` mention record the skill's body as an
 * `instruction` item that the next request carries, and an invalid skill is reported once,
 * with its file and field, and left out.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Item, ItemOf } from '../../src/protocol/index.js';
import { startInProcessServer, type InProcessServer } from '../helpers/in-process-server.js';

let harness: InProcessServer | undefined;
afterEach(async () => {
  await harness?.stop();
  harness = undefined;
});

function writeSkill(root: string, folder: string, frontMatter: string, body: string): void {
  mkdirSync(path.join(root, folder), { recursive: true });
  writeFileSync(path.join(root, folder, 'SKILL.md'), `---\n${frontMatter}---\n${body}`);
}

function itemsOf<K extends Item['kind']>(kind: K): ItemOf<K>[] {
  return harness!.completedItems().filter((item): item is ItemOf<K> => item.kind === kind);
}

function request(index: number): { text: string; tools: string[] } {
  const body = harness!.environment.mock.requests[index]?.body as { tools?: { name: string }[] } | undefined;
  return { text: JSON.stringify(body ?? null), tools: (body?.tools ?? []).map((tool) => tool.name) };
}

describe('skills', () => {
  it('offers valid skills, loads one through load_skill and one through $name, and reports an invalid one', async () => {
    harness = await startInProcessServer(
      `
responses:
  - toolCalls: [{ name: load_skill, arguments: { name: deploy-app } }]
  - text: "deployed"
  - text: "notes written"
`,
      {
        beforeStart: (environment) => {
          // The server's own skills, the work location's .agents/skills and .openvaala/skills.
          writeSkill(path.join(environment.paths.configDir, 'skills'), 'release-notes', 'name: release-notes\ndescription: DESCRIPTION-RN-1 write release notes from the git log\n', 'BODY-RN-2: read git log since the last tag.\n');
          writeSkill(path.join(environment.workDir, '.agents', 'skills'), 'deploy-app', 'name: deploy-app\ndescription: DESCRIPTION-DA-3 deploy the app to staging\nlicense: MIT\n', 'BODY-DA-4: run ./deploy.sh staging.\n');
          writeSkill(path.join(environment.workDir, '.openvaala', 'skills'), 'broken-skill', 'name: broken\ndescription: DESCRIPTION-BROKEN-5\n', 'BODY-BROKEN-6\n');
        },
      },
    );
    const { workDir } = harness.environment;
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'deploy it' });
    await harness.turnsCompleted(1);

    const first = request(0);
    expect(first.text).toContain('DESCRIPTION-RN-1 write release notes from the git log');
    expect(first.text).toContain('DESCRIPTION-DA-3 deploy the app to staging');
    expect(first.text).not.toContain('DESCRIPTION-BROKEN-5');
    expect(first.text).not.toContain('BODY-DA-4');
    expect(first.tools).toContain('load_skill');

    const brokenFile = path.join(workDir, '.openvaala', 'skills', 'broken-skill', 'SKILL.md');
    const [report] = itemsOf('instruction').filter((item) => item.name === 'skill-problems');
    expect(report?.source).toBe('skill');
    expect(report?.body).toContain(`${brokenFile}:2: name: "broken" does not match the folder name "broken-skill"`);

    const loaded = itemsOf('instruction').find((item) => item.name === 'deploy-app');
    expect(loaded?.source).toBe('skill');
    expect(loaded?.body).toContain('BODY-DA-4: run ./deploy.sh staging.');
    expect(loaded?.body).toContain(path.join(workDir, '.agents', 'skills', 'deploy-app'));
    // Recorded after the call's result, so the request keeps the call next to its result.
    const kinds = harness.completedItems().map((item) => (item.kind === 'instruction' ? `instruction:${item.name}` : item.kind));
    expect(kinds).toEqual(['instruction:skill-problems', 'user_message', 'tool_call', 'instruction:deploy-app', 'assistant_message']);
    expect(request(1).text).toContain('BODY-DA-4: run ./deploy.sh staging.');

    await harness.client.request('session/input', { conversationId, input: 'now use $release-notes please (not $HOME)' });
    await harness.turnsCompleted(2);
    const mentioned = itemsOf('instruction').find((item) => item.name === 'release-notes');
    expect(mentioned?.body).toContain('BODY-RN-2: read git log since the last tag.');
    expect(request(2).text).toContain('BODY-RN-2');
    // The invalid skill is reported to the model once per session, not on every turn.
    expect(itemsOf('instruction').filter((item) => item.name === 'skill-problems')).toHaveLength(1);
    // The user is told at each turn that skips it, until the file is fixed: a turn/warning per skipped file.
    const warnings = harness.events.flatMap((event) => (event.method === 'turn/warning' ? [event.params] : []));
    expect(warnings.map((warning) => [warning.source, warning.name])).toEqual([
      ['skill', brokenFile],
      ['skill', brokenFile],
    ]);
    expect(warnings[0]?.message).toBe(`skill skipped: ${brokenFile}:2: name: "broken" does not match the folder name "broken-skill"`);
  });

  it('offers no load_skill tool and no catalog when there are no skills, and ignores $words', async () => {
    harness = await startInProcessServer(
      `
responses:
  - text: "no skills here"
`,
    );
    const conversationId = await harness.conversation();
    await harness.client.request('session/input', { conversationId, input: 'hello $deploy-app' });
    await harness.turnsCompleted(1);
    expect(request(0).tools).not.toContain('load_skill');
    expect(request(0).text).not.toContain('# Skills');
    expect(itemsOf('instruction')).toEqual([]);
  });
});
