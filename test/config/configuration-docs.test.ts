/**
 * Keeps the configuration reference (`docs/configuration.md`) true to the schemas: every
 * example named ```yaml file=X is a valid X, every key of every file's schema has a row in that
 * file's table, no row names a key that does not exist, and every file has a section.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CONFIGURATION_FILES, type ConfigurationFileSpec } from '../../src/config/configuration.js';
import { schemaKeyPaths } from '../../src/config/describe-schema.js';
import { ConfigError, parseYamlFile } from '../../src/config/yaml-file.js';

const DOC_NAME = 'docs/configuration.md';
const DOC_FILE = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', DOC_NAME);

/** One ```yaml file=X block. */
interface Example {
  fileName: string;
  /** Line of the opening fence (1-based). */
  line: number;
  text: string;
}

/** One `## heading` section. */
interface Section {
  heading: string;
  line: number;
  lines: string[];
}

/** One table row whose first cell is a single `key path`. */
interface Row {
  path: string;
  line: number;
  cells: string[];
}

function examplesOf(markdown: string): Example[] {
  const examples: Example[] = [];
  const lines = markdown.split('\n');
  for (let index = 0; index < lines.length; index++) {
    const open = /^(`{3,})yaml\b(.*)$/.exec(lines[index] ?? '');
    if (!open) continue;
    const fence = open[1] ?? '```';
    const start = index;
    const body: string[] = [];
    for (index++; index < lines.length && !(lines[index] ?? '').startsWith(fence); index++) body.push(lines[index] ?? '');
    const fileName = /(?:^|\s)file=(\S+)/.exec(open[2] ?? '')?.[1];
    if (fileName !== undefined) examples.push({ fileName, line: start + 1, text: `${body.join('\n')}\n` });
  }
  return examples;
}

/** Splits the document at `## ` headings, skipping fenced blocks (a `## ` line inside one is not a heading). */
function sectionsOf(markdown: string): Section[] {
  const sections: Section[] = [];
  let inFence = false;
  markdown.split('\n').forEach((text, index) => {
    if (/^```/.test(text)) inFence = !inFence;
    const heading = !inFence ? /^## (.+)$/.exec(text)?.[1] : undefined;
    if (heading !== undefined) sections.push({ heading: heading.replace(/`/g, '').trim(), line: index + 1, lines: [] });
    else sections.at(-1)?.lines.push(text);
  });
  return sections;
}

function rowsOf(section: Section): Row[] {
  const rows: Row[] = [];
  section.lines.forEach((text, index) => {
    if (!text.startsWith('|') || /^\|\s*-/.test(text)) return;
    const cells = text.split(/(?<!\\)\|/).slice(1, -1).map((cell) => cell.trim());
    const keyPath = /^`([^`]+)`$/.exec(cells[0] ?? '')?.[1];
    if (keyPath !== undefined) rows.push({ path: keyPath, line: section.line + 1 + index, cells });
  });
  return rows;
}

/** How a default the schema gives is written in the default column. */
function writtenDefault(value: unknown): string | undefined {
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return `\`${String(value)}\``;
  if (Array.isArray(value) && value.length === 0) return '`[]`';
  if (value !== null && typeof value === 'object' && Object.keys(value).length === 0) return '`{}`';
  return undefined;
}

/** An assertion message that lists the offending entries, so the failure names them. */
function listing(title: string, entries: string[]): string {
  return entries.length === 0 ? title : `${title}:\n  ${entries.join('\n  ')}\n`;
}

const markdown = readFileSync(DOC_FILE, 'utf8');
const examples = examplesOf(markdown);
const sections = sectionsOf(markdown);
const files = Object.values(CONFIGURATION_FILES) as ConfigurationFileSpec<unknown>[];
const fileNames = files.map((file) => file.fileName);

describe(DOC_NAME, () => {
  it('names only configuration files in ```yaml file=… blocks', () => {
    const unknown = examples.filter((example) => !fileNames.includes(example.fileName)).map((example) => `${DOC_NAME}:${example.line}: file=${example.fileName}`);
    expect(unknown, listing(`examples naming a file that is not a configuration file (known: ${fileNames.join(', ')})`, unknown)).toEqual([]);
  });

  it('has a section for the skills/ folder and for env: secrets', () => {
    const headings = sections.map((section) => section.heading);
    expect(headings.some((heading) => heading.startsWith('skills/')), `${DOC_NAME}: no "## skills/" section`).toBe(true);
    expect(headings.some((heading) => heading.includes('env:NAME')), `${DOC_NAME}: no section on env:NAME secrets`).toBe(true);
  });

  describe.each(files.map((file) => [file.fileName, file] as const))('%s', (fileName, file) => {
    const section = sections.find((candidate) => candidate.heading === fileName);
    const rows = section ? rowsOf(section) : [];
    const keyPaths = schemaKeyPaths(file.schema);

    it('has a section with an example and a table of keys', () => {
      expect(section, `${DOC_NAME}: no "## ${fileName}" section`).toBeDefined();
      const own = examples.filter((example) => example.fileName === fileName && section && example.line > section.line && example.line <= section.line + section.lines.length);
      expect(own.length, `${DOC_NAME}: section "## ${fileName}" has no \`\`\`yaml file=${fileName} example`).toBeGreaterThan(0);
      expect(rows.length, `${DOC_NAME}: section "## ${fileName}" has no table of key paths`).toBeGreaterThan(0);
    });

    it('has examples that are valid files', () => {
      const problems: string[] = [];
      for (const example of examples.filter((candidate) => candidate.fileName === fileName)) {
        try {
          parseYamlFile(`${DOC_NAME}:${example.line} (example of ${fileName})`, example.text, file.schema);
        } catch (error) {
          if (!(error instanceof ConfigError)) throw error;
          problems.push(error.message);
        }
      }
      expect(problems, listing(`${DOC_NAME}: invalid examples of ${fileName}`, problems)).toEqual([]);
    });

    it('documents every key of the schema', () => {
      const documented = new Set(rows.map((row) => row.path));
      const missing = keyPaths.filter((key) => !documented.has(key.path)).map((key) => `${fileName}: ${key.path}`);
      expect(missing, listing(`${DOC_NAME}: keys of ${fileName} with no row in the "## ${fileName}" table`, missing)).toEqual([]);
    });

    it('documents no key the schema does not have, and each key once', () => {
      const known = new Set(keyPaths.map((key) => key.path));
      const stale = rows.filter((row) => !known.has(row.path)).map((row) => `${DOC_NAME}:${row.line}: ${fileName}: ${row.path}`);
      expect(stale, listing(`${DOC_NAME}: rows of the "## ${fileName}" table naming keys ${fileName} does not have`, stale)).toEqual([]);
      const repeated = rows.filter((row, index) => rows.findIndex((other) => other.path === row.path) !== index).map((row) => `${DOC_NAME}:${row.line}: ${fileName}: ${row.path}`);
      expect(repeated, listing(`${DOC_NAME}: keys of ${fileName} documented twice`, repeated)).toEqual([]);
    });

    it('gives the defaults the schema gives', () => {
      const wrong: string[] = [];
      for (const key of keyPaths) {
        const row = rows.find((candidate) => candidate.path === key.path);
        for (const value of key.defaults) {
          const written = writtenDefault(value);
          if (row && written !== undefined && !(row.cells[2] ?? '').includes(written)) {
            wrong.push(`${DOC_NAME}:${row.line}: ${fileName}: ${key.path}: default column should say ${written}, says "${row.cells[2] ?? ''}"`);
          }
        }
      }
      expect(wrong, listing(`${DOC_NAME}: defaults of ${fileName} that differ from the schema`, wrong)).toEqual([]);
    });
  });
});
