/**
 * Reading one `SKILL.md` (SPEC §6 "Skills are folders with a `SKILL.md` (front matter
 * `name`, `description`)", following the Agent Skills format): YAML front matter between
 * `---` lines, then the Markdown body the model gets when the skill is loaded.
 *
 * ```markdown
 * ---
 * name: release-notes
 * description: Write release notes from the git log since the last tag.
 * license: MIT            # any other field is kept in `frontMatter`
 * ---
 * 1. Run `git describe --tags --abbrev=0` …
 * ```
 */
import { isMap, LineCounter, parseDocument, type Node } from 'yaml';
import { locateYamlError } from '../../config/yaml-syntax-errors.js';

/** A skill name: 1–64 lowercase letters and digits in groups joined by single hyphens (the Agent Skills rule). */
export const SKILL_NAME_PATTERN = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
/** Longest skill name, in characters. */
export const SKILL_NAME_MAX_LENGTH = 64;
/** Longest description, in characters. */
export const SKILL_DESCRIPTION_MAX_LENGTH = 1024;

/** A valid skill as read from its file. */
export interface ParsedSkill {
  name: string;
  description: string;
  /** The Markdown after the front matter. */
  body: string;
  /** Every front matter field, `name` and `description` included. */
  frontMatter: Record<string, unknown>;
}

/** Why a `SKILL.md` was skipped: the file, the front matter field (or `(front matter)` / `(file)`), the line when known. */
export interface SkillProblem {
  file: string;
  field: string;
  line?: number;
  message: string;
}

/** `path:line: field: message`, as reported to the log and the conversation. */
export function describeSkillProblem(problem: SkillProblem): string {
  return `${problem.file}${problem.line !== undefined ? `:${problem.line}` : ''}: ${problem.field}: ${problem.message}`;
}

const FRONT_MATTER = /^---[ \t]*\r?\n(?:([\s\S]*?)\r?\n)?---[ \t]*(?:\r?\n|$)/;

/**
 * Parses a `SKILL.md`.
 * @param file its path, named in problems
 * @param folderName the name of the folder holding it, which `name` must equal
 * @param text its content
 * @returns the skill, or the problems that make it invalid (never both)
 */
export function parseSkillFile(file: string, folderName: string, text: string): { skill?: ParsedSkill; problems: SkillProblem[] } {
  const content = text.replace(/^\uFEFF/, '');
  const match = FRONT_MATTER.exec(content);
  if (!match) {
    return { problems: [{ file, field: '(front matter)', line: 1, message: 'missing: the file must start with a "---" line, the YAML front matter (name, description) and a closing "---" line' }] };
  }
  const yamlText = match[1] ?? '';
  const lineCounter = new LineCounter();
  const document = parseDocument(yamlText, { lineCounter });
  // Lines are counted from the opening "---", which is line 1 of the file.
  const fileLine = (offset: number | undefined): number | undefined => (offset === undefined ? undefined : lineCounter.linePos(offset).line + 1);
  if (document.errors.length > 0) {
    return {
      problems: document.errors.map((error) => {
        const { line, message } = locateYamlError(error, document, yamlText, lineCounter);
        return { file, field: '(front matter)', line: line + 1, message: `invalid YAML: ${message}` };
      }),
    };
  }
  if (!isMap(document.contents)) {
    return { problems: [{ file, field: '(front matter)', line: 2, message: 'must be a YAML mapping with name and description' }] };
  }
  const frontMatter = document.toJS() as Record<string, unknown>;
  const lineOf = (key: string): number | undefined => {
    const node = isMap(document.contents) ? (document.contents.get(key, true) as Node | undefined) : undefined;
    return fileLine(node?.range?.[0]);
  };
  const problems: SkillProblem[] = [];
  const problem = (field: string, message: string): void => {
    const line = lineOf(field);
    problems.push({ file, field, ...(line !== undefined ? { line } : {}), message });
  };

  const { name, description } = frontMatter;
  if (name === undefined || name === null) problem('name', 'missing (required)');
  else if (typeof name !== 'string') problem('name', `must be a string, got ${typeof name}`);
  else if (name.length > SKILL_NAME_MAX_LENGTH || !SKILL_NAME_PATTERN.test(name)) problem('name', `"${name}" is not a valid skill name (1–${SKILL_NAME_MAX_LENGTH} lowercase letters, digits and single hyphens)`);
  else if (name !== folderName) problem('name', `"${name}" does not match the folder name "${folderName}"`);

  if (description === undefined || description === null) problem('description', 'missing (required)');
  else if (typeof description !== 'string') problem('description', `must be a string, got ${typeof description}`);
  else if (description.trim() === '') problem('description', 'must not be empty');
  else if (description.length > SKILL_DESCRIPTION_MAX_LENGTH) problem('description', `is ${description.length} characters long; at most ${SKILL_DESCRIPTION_MAX_LENGTH} are allowed`);

  if (problems.length > 0) return { problems };
  return { skill: { name: name as string, description: (description as string).trim(), body: content.slice(match[0].length), frontMatter }, problems: [] };
}
