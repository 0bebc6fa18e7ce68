/**
 * Ignore files for `glob` and the portable `grep`, read the way ripgrep reads them (with
 * `--no-require-git`, so a workspace that is not a git repository behaves the same):
 * - `.gitignore`, `.ignore` and `.rgignore` in every directory walked, and in the directories
 *   from the workspace root down to the searched directory, apply to the paths below them;
 * - within one directory `.rgignore` beats `.ignore`, which beats `.gitignore` (later rules
 *   win, so they are read in that order); a deeper directory's rules beat a shallower one's;
 * - gitignore syntax (negations with `!`, a trailing `/` for directories, anchoring with a
 *   leading or inner `/`) is matched by the `ignore` package;
 * - a directory that is ignored is not entered, so a negation cannot bring back a file below
 *   it (as in git).
 * Global git excludes and `.git/info/exclude` are not read.
 */
import path from 'node:path';
import ignore, { type Ignore } from 'ignore';
import type { DirectoryEntry, ExecutorFileSystem } from '../../executors/executor.js';

/** Ignore files of one directory, lowest precedence first. */
export const IGNORE_FILE_NAMES = ['.gitignore', '.ignore', '.rgignore'] as const;

/** The rules of one directory. */
interface IgnoreLevel {
  /** Absolute directory the rules are relative to. */
  directory: string;
  matcher: Ignore;
}

/** Reads the ignore files of `directory` that `present` says exist; undefined when there are none. */
async function readLevel(fileSystem: ExecutorFileSystem, directory: string, present: (name: string) => boolean): Promise<IgnoreLevel | undefined> {
  const names = IGNORE_FILE_NAMES.filter(present);
  if (names.length === 0) return undefined;
  // Case-sensitive, as ripgrep matches ignore files.
  const matcher = ignore({ ignorecase: false });
  for (const name of names) {
    try {
      matcher.add(new TextDecoder('utf-8').decode(await fileSystem.readFile(path.posix.join(directory, name))));
    } catch {
      // An unreadable ignore file (a directory of that name, no permission) ignores nothing, as in ripgrep.
    }
  }
  return { directory, matcher };
}

/** The ignore rules in force in one directory of a walk: its own and its ancestors'. */
export class IgnoreRules {
  private constructor(private readonly levels: IgnoreLevel[]) {}

  /**
   * The rules in force in `start` from the ignore files of the directories from `workspaceRoot`
   * down to `start` (both absolute; `start` at or below the root).
   */
  static async forDirectory(fileSystem: ExecutorFileSystem, workspaceRoot: string, start: string): Promise<IgnoreRules> {
    const relative = path.posix.relative(workspaceRoot, start);
    const directories = [workspaceRoot];
    if (relative !== '' && !relative.startsWith('..')) {
      let current = workspaceRoot;
      for (const part of relative.split('/')) {
        current = path.posix.join(current, part);
        directories.push(current);
      }
    } else if (relative !== '') {
      directories.splice(0, 1, start);
    }
    const levels: IgnoreLevel[] = [];
    for (const directory of directories) {
      const found = new Set<string>();
      for (const name of IGNORE_FILE_NAMES) {
        const stat = await fileSystem.stat(path.posix.join(directory, name)).catch(() => undefined);
        if (stat?.kind === 'file') found.add(name);
      }
      const level = await readLevel(fileSystem, directory, (name) => found.has(name));
      if (level) levels.push(level);
    }
    return new IgnoreRules(levels);
  }

  /** The rules in force in a subdirectory whose listing is `entries` (reads its ignore files). */
  async enter(fileSystem: ExecutorFileSystem, directory: string, entries: DirectoryEntry[]): Promise<IgnoreRules> {
    const files = new Set(entries.filter((entry) => entry.kind === 'file').map((entry) => entry.name));
    const level = await readLevel(fileSystem, directory, (name) => files.has(name));
    return level ? new IgnoreRules([...this.levels, level]) : this;
  }

  /** Whether the rules exclude an absolute path (a directory when `isDirectory`). */
  ignores(absolutePath: string, isDirectory: boolean): boolean {
    for (let index = this.levels.length - 1; index >= 0; index -= 1) {
      const level = this.levels[index] as IgnoreLevel;
      const relative = path.posix.relative(level.directory, absolutePath);
      if (relative === '' || relative.startsWith('..')) continue;
      const verdict = level.matcher.test(isDirectory ? `${relative}/` : relative);
      if (verdict.ignored) return true;
      if (verdict.unignored) return false;
    }
    return false;
  }
}
