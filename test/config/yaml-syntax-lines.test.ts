/**
 * A YAML syntax error names a line the file has: an unclosed flow sequence, flow mapping or
 * quoted string is reported at the line where it was opened (the parser only notices at the
 * end of the file, past its last line), and an ordinary error mid-file keeps its own line.
 * Every YAML file shares the formatter: configuration files and skills' front matter.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { loadConfiguration } from '../../src/config/configuration.js';
import { parseSkillFile } from '../../src/runtime/skills/skill-file.js';

let directory: string;
beforeEach(() => {
  directory = mkdtempSync(path.join(os.tmpdir(), 'openvaala-yaml-lines-'));
});
afterEach(() => rmSync(directory, { recursive: true, force: true }));

const PROVIDERS = 'providers:\n  mock: { kind: openai-compatible, baseURL: "http://127.0.0.1:9/v1" }\ndefaultModel: mock/m\n';

/** The syntax lines of loading a directory with one file written, as `name:line: message`. */
async function syntaxProblems(name: string, content: string): Promise<string[]> {
  writeFileSync(path.join(directory, 'providers.yaml'), name === 'providers.yaml' ? content : PROVIDERS);
  writeFileSync(path.join(directory, name), content);
  const message = await loadConfiguration(directory, { environment: {} }).then(
    () => '',
    (error: unknown) => (error as Error).message,
  );
  return message
    .split('\n')
    .filter((line) => line.includes('(YAML syntax)'))
    .map((line) => line.replace(`${directory}${path.sep}`, ''))
    .filter((line) => line.startsWith(`${name}:`));
}

it.each([
  ['server.yaml', 'platform:\n  memberWorkspaces:\n    # where members work\n    local: [/srv\n', 4, /"\[" opened at column 12 is never closed with "\]"/],
  ['server.yaml', 'platform:\n  memberWorkspaces:\n    local: [/srv', 3, /"\[" opened at column 12 is never closed with "\]"/],
  ['executors.yaml', 'executors:\n  box: { kind: ssh, host: example.org\n', 2, /"\{" opened at column 8 is never closed with "\}"/],
  ['agents.yaml', 'agents:\n  default:\n    instructions: "Be brief.\n\n', 3, /the " opened at column 19 is never closed/],
  ['mcp.yaml', "servers:\n  docs:\n    command: 'npx", 3, /the ' opened at column 14 is never closed/],
  ['hooks.yaml', 'hooks:\n  Stop:\n    - [a, b\n  # a comment\n', 3, /"\[" opened at column 7 is never closed with "\]"/],
])('%s: an unclosed bracket or quote at the end is named at the line it opens', async (name, content, line, message) => {
  const lines = content.split('\n').length - (content.endsWith('\n') ? 1 : 0);
  const problems = await syntaxProblems(name, content);
  expect(problems).toHaveLength(1);
  expect(problems[0]).toMatch(new RegExp(`^${name.replace('.', '\\.')}:${line}: \\(YAML syntax\\): `));
  expect(problems[0]).toMatch(message);
  expect(line).toBeLessThanOrEqual(lines);
});

it('keeps the line of an ordinary error mid-file, and names an unclosed bracket mid-file at its line', async () => {
  expect(await syntaxProblems('agents.yaml', 'agents:\n  default: {}\n  default: {}\n')).toEqual(['agents.yaml:3: (YAML syntax): Map keys must be unique']);
  const unclosed = await syntaxProblems('server.yaml', 'platform:\n  memberWorkspaces:\n    local: [/srv\nlimits: {}\n');
  expect(unclosed).toHaveLength(1);
  expect(unclosed[0]).toMatch(/^server\.yaml:3: \(YAML syntax\): .*"\[" opened at column 12 is never closed with "\]"/);
});

it('names the line of the skill file where an unclosed bracket of its front matter opens', () => {
  const { problems } = parseSkillFile('/skills/notes/SKILL.md', 'notes', '---\nname: notes\ndescription: Notes.\nallowed-tools: [exec_command\n---\nBody\n');
  expect(problems).toHaveLength(1);
  expect(problems[0]).toMatchObject({ line: 4 });
  expect(problems[0]?.message).toMatch(/"\[" opened at column 16 is never closed with "\]"/);
});
