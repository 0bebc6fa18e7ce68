/**
 * `SKILL.md` parsing and skill discovery: valid front matter keeps every field; each kind of
 * invalid front matter is reported with the file, the field and the line; a project's skill
 * overrides a personal one of the same name.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { LocalFileSystem } from '../../src/executors/local/local-file-system.js';
import { describeSkillProblem, parseSkillFile } from '../../src/runtime/skills/skill-file.js';
import { discoverSkills } from '../../src/runtime/skills/skill-discovery.js';
import { createLoadSkillTool, findSkillMentions } from '../../src/runtime/skills/skill-tool.js';

const FILE = '/skills/release-notes/SKILL.md';

describe('parseSkillFile', () => {
  it('reads name, description, the other fields and the body', () => {
    const { skill, problems } = parseSkillFile(FILE, 'release-notes', '---\nname: release-notes\ndescription: Write release notes.\nlicense: MIT\nallowed-tools: [exec_command]\n---\n# Steps\n1. Read the log.\n');
    expect(problems).toEqual([]);
    expect(skill).toEqual({
      name: 'release-notes',
      description: 'Write release notes.',
      body: '# Steps\n1. Read the log.\n',
      frontMatter: { name: 'release-notes', description: 'Write release notes.', license: 'MIT', 'allowed-tools': ['exec_command'] },
    });
  });

  it('reports a missing name and a missing description with their field', () => {
    const { skill, problems } = parseSkillFile(FILE, 'release-notes', '---\nlicense: MIT\n---\nbody\n');
    expect(skill).toBeUndefined();
    expect(problems.map((problem) => [problem.field, problem.message])).toEqual([
      ['name', 'missing (required)'],
      ['description', 'missing (required)'],
    ]);
  });

  it('reports a name that does not match the folder, with the line of the field', () => {
    const { problems } = parseSkillFile(FILE, 'release-notes', '---\ndescription: x\nname: release\n---\n');
    expect(problems).toEqual([{ file: FILE, field: 'name', line: 3, message: '"release" does not match the folder name "release-notes"' }]);
    expect(describeSkillProblem(problems[0]!)).toBe(`${FILE}:3: name: "release" does not match the folder name "release-notes"`);
  });

  it('reports an invalid name, an empty description and a description that is not text', () => {
    expect(parseSkillFile(FILE, 'Release_Notes', '---\nname: Release_Notes\ndescription: ""\n---\n').problems.map((problem) => problem.field)).toEqual(['name', 'description']);
    expect(parseSkillFile(FILE, 'release-notes', '---\nname: release-notes\ndescription: [a, b]\n---\n').problems[0]).toMatchObject({ field: 'description', message: 'must be a string, got object' });
  });

  it('reports bad YAML and a missing front matter', () => {
    const broken = parseSkillFile(FILE, 'release-notes', '---\nname: release-notes\ndescription: "unterminated\n---\n');
    expect(broken.problems[0]).toMatchObject({ file: FILE, field: '(front matter)' });
    expect(broken.problems[0]?.message).toMatch(/^invalid YAML: /);
    // The line is the file's own (given apart), not the library's count within the front matter.
    expect(broken.problems[0]?.message).not.toMatch(/at line \d+, column/);
    expect(parseSkillFile(FILE, 'release-notes', '# Just markdown\n').problems[0]).toMatchObject({ field: '(front matter)', line: 1 });
  });
});

describe('discoverSkills', () => {
  const directories: string[] = [];
  afterEach(() => {
    for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
  });

  function writeSkill(root: string, folder: string, frontMatter: string, body = 'steps\n'): void {
    mkdirSync(path.join(root, folder), { recursive: true });
    writeFileSync(path.join(root, folder, 'SKILL.md'), `---\n${frontMatter}---\n${body}`);
  }

  it('lets a later root override an earlier one, follows linked folders, skips folders without SKILL.md, and reports invalid files', async () => {
    const base = mkdtempSync(path.join(os.tmpdir(), 'openvaala-skills-'));
    directories.push(base);
    const personal = path.join(base, 'personal');
    const project = path.join(base, 'project');
    writeSkill(personal, 'deploy', 'name: deploy\ndescription: personal deploy\n');
    writeSkill(personal, 'notes', 'name: notes\ndescription: personal notes\n');
    writeSkill(project, 'deploy', 'name: deploy\ndescription: project deploy\n');
    writeSkill(project, 'broken', 'name: other\ndescription: x\n');
    mkdirSync(path.join(project, 'shared-scripts'));
    writeSkill(path.join(base, 'elsewhere'), 'linked', 'name: linked\ndescription: from a link\n');
    symlinkSync(path.join(base, 'elsewhere', 'linked'), path.join(project, 'linked'));

    const fileSystem = new LocalFileSystem();
    const { skills, problems } = await discoverSkills([
      { fileSystem, directory: personal, location: 'server' },
      { fileSystem, directory: project, location: 'local' },
      { fileSystem, directory: path.join(base, 'missing'), location: 'local' },
    ]);
    expect([...skills.keys()].sort()).toEqual(['deploy', 'linked', 'notes']);
    expect(skills.get('deploy')).toMatchObject({ description: 'project deploy', location: 'local', directory: path.join(project, 'deploy') });
    expect(problems).toEqual([{ file: path.join(project, 'broken', 'SKILL.md'), field: 'name', line: 2, message: '"other" does not match the folder name "broken"' }]);
  });
});

describe('findSkillMentions', () => {
  it('finds known $names in order, once, and ignores unknown ones and $ inside words', () => {
    const known = new Map([['deploy', {}], ['release-notes', {}]]) as unknown as Parameters<typeof findSkillMentions>[1];
    expect(findSkillMentions('use $release-notes, then $deploy and $release-notes; not a$deploy or $HOME or $deployer', known)).toEqual(['release-notes', 'deploy']);
  });
});

describe('load_skill', () => {
  it('names the available skills when asked for an unknown one, and says when one is already loaded', async () => {
    const skill = { name: 'deploy', description: 'd', body: 'b', frontMatter: {}, directory: '/s/deploy', file: '/s/deploy/SKILL.md', location: 'server' };
    const tool = createLoadSkillTool(new Map([['deploy', skill]]), async () => false);
    const context = { workspace: undefined as never, signal: new AbortController().signal };
    expect(await tool.invoke({ name: 'deploy-app' }, context)).toEqual({ output: 'no skill named "deploy-app"; available: deploy', isError: true });
    expect((await tool.invoke({ name: 'deploy' }, context)).output).toBe('Skill "deploy" is already loaded; its instructions are above.');
    expect((await tool.invoke({}, context)).output).toContain('load_skill: argument "name"');
  });
});
