/**
 * Finding skills (SPEC §3: a conversation has skills): every folder holding a `SKILL.md`
 * directly under a skills directory. The directories are, from lowest to highest
 * precedence, `<configDir>/skills/` on the server, then the work location's `.agents/skills/`
 * and `.openvaala/skills/`, read through the executor's file system. A skill of the same name
 * in a later directory replaces the earlier one (a project's skill overrides a personal one).
 */
import path from 'node:path';
import type { ExecutorFileSystem } from '../../executors/executor.js';
import { parseSkillFile, type ParsedSkill, type SkillProblem } from './skill-file.js';

/** File name of a skill's instructions inside its folder. */
export const SKILL_FILE = 'SKILL.md';
/** Largest `SKILL.md` read, in bytes; a larger one is reported and skipped. */
export const SKILL_FILE_LIMIT_BYTES = 256 * 1024;

/** A directory searched for skill folders. */
export interface SkillRoot {
  /** The file system it is on (the server's for the config directory, the executor's for the work location). */
  fileSystem: ExecutorFileSystem;
  /** Absolute path of the directory. */
  directory: string;
  /** Where it is, for the model: `server` (config directory) or the executor's name. */
  location: string;
  /** A plugin's name: its skills are named `<namespace>:<skill>`. */
  namespace?: string;
}

/** A skill found in a root. */
export interface Skill extends ParsedSkill {
  /** Absolute path of the skill's folder. */
  directory: string;
  /** Absolute path of its `SKILL.md`. */
  file: string;
  /** The root's `location`. */
  location: string;
}

/** What discovery found: valid skills by name, and the files it skipped. */
export interface SkillDiscovery {
  skills: Map<string, Skill>;
  problems: SkillProblem[];
}

/** The skills directories of a work location (lowest precedence first), on its executor. */
export function workLocationSkillDirectories(workDirectory: string): string[] {
  return [path.posix.join(workDirectory, '.agents', 'skills'), path.posix.join(workDirectory, '.openvaala', 'skills')];
}

async function isDirectory(fileSystem: ExecutorFileSystem, directory: string): Promise<boolean> {
  const stat = await fileSystem.stat(directory);
  if (stat?.kind === 'directory') return true;
  if (stat?.kind !== 'symlink') return false;
  // A linked skill folder (a shared checkout of skills) counts when it leads to a directory.
  const target = await fileSystem.stat(await fileSystem.realPath(directory));
  return target?.kind === 'directory';
}

async function readSkill(root: SkillRoot, folderName: string): Promise<{ skill?: Skill; problems: SkillProblem[] }> {
  const directory = path.posix.join(root.directory, folderName);
  const file = path.posix.join(directory, SKILL_FILE);
  try {
    if (!(await isDirectory(root.fileSystem, directory))) return { problems: [] };
    const stat = await root.fileSystem.stat(file);
    // A folder without SKILL.md holds something else (shared scripts): not a skill, not an error.
    if (stat === undefined) return { problems: [] };
    if (stat.kind === 'directory') return { problems: [{ file, field: '(file)', message: 'is a directory, not a file' }] };
    if (stat.size > SKILL_FILE_LIMIT_BYTES) return { problems: [{ file, field: '(file)', message: `is ${stat.size} bytes; at most ${SKILL_FILE_LIMIT_BYTES} are read` }] };
    const text = Buffer.from(await root.fileSystem.readFile(file)).toString('utf8');
    const parsed = parseSkillFile(file, folderName, text);
    if (!parsed.skill) return { problems: parsed.problems };
    const name = root.namespace !== undefined ? `${root.namespace}:${parsed.skill.name}` : parsed.skill.name;
    return { skill: { ...parsed.skill, name, directory, file, location: root.location }, problems: [] };
  } catch (error) {
    return { problems: [{ file, field: '(file)', message: `cannot be read: ${(error as Error).message}` }] };
  }
}

/**
 * Reads every skill under `roots`. Never rejects: unreadable directories and invalid files
 * are returned as problems naming the file and field; missing roots are skipped silently.
 */
export async function discoverSkills(roots: SkillRoot[]): Promise<SkillDiscovery> {
  const skills = new Map<string, Skill>();
  const problems: SkillProblem[] = [];
  for (const root of roots) {
    let folders: string[];
    try {
      if (!(await isDirectory(root.fileSystem, root.directory))) continue;
      folders = (await root.fileSystem.readDirectory(root.directory)).filter((entry) => entry.kind === 'directory' || entry.kind === 'symlink').map((entry) => entry.name);
    } catch (error) {
      problems.push({ file: root.directory, field: '(directory)', message: `cannot be read: ${(error as Error).message}` });
      continue;
    }
    const found = await Promise.all(folders.map((folder) => readSkill(root, folder)));
    for (const result of found) {
      problems.push(...result.problems);
      if (result.skill) skills.set(result.skill.name, result.skill);
    }
  }
  return { skills, problems };
}
