/**
 * The portable engine of `grep`, for executors without ripgrep (a virtual executor, a bare
 * remote host): walks the tree through the executor's file system and matches each line with
 * a JavaScript regular expression. It selects the files ripgrep would with the flags of
 * `ripgrepCommand`, ignore files included (`IgnoreRules`).
 */
import path from 'node:path';
import type { Workspace } from '../../executors/workspace.js';
import { compileGlob } from './glob-pattern.js';
import { IgnoreRules } from './ignore-rules.js';
import type { GrepMatch, GrepOutcome, GrepQuery } from './grep-types.js';
import { walkTree } from './walk.js';

/** Files larger than this are not searched by the portable engine, in bytes. */
export const PORTABLE_GREP_MAX_FILE_BYTES = 16 * 1024 * 1024;
/** Entries visited at most while walking. */
const MAX_WALK_ENTRIES = 200_000;
/** A NUL byte within this many leading bytes marks a binary file (skipped), as ripgrep does. */
const BINARY_SNIFF_BYTES = 8 * 1024;
/** Files read at the same time. */
const READ_CONCURRENCY = 8;

/**
 * Compiles the query's pattern.
 * @throws Error naming the pattern when it is not a valid JavaScript regular expression
 */
export function compilePattern(query: GrepQuery): RegExp {
  const source = query.literal ? query.pattern.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&') : query.pattern;
  const flags = query.ignoreCase ? 'i' : '';
  try {
    // Unicode mode first (`\p{L}` works as in ripgrep); without it, escapes such as `\-`
    // that Unicode mode rejects but ripgrep accepts still work.
    return new RegExp(source, `${flags}u`);
  } catch {
    try {
      return new RegExp(source, flags);
    } catch (error) {
      throw new Error(`invalid regular expression "${query.pattern}": ${(error as Error).message}`, { cause: error });
    }
  }
}

/**
 * Searches with the executor's file system.
 * @param absolute the search path, already resolved inside the workspace
 * @param limit matches wanted; more are only noted
 * @throws Error for an invalid pattern or glob
 */
export async function portableSearch(workspace: Workspace, absolute: string, query: GrepQuery, limit: number, signal?: AbortSignal): Promise<GrepOutcome> {
  const expression = compilePattern(query);
  const glob = query.glob !== undefined ? compileGlob(query.glob) : undefined;
  const fileSystem = workspace.executor.fs;
  // The search path itself is followed when it is a symlink, as ripgrep follows paths it is given.
  const stat = await fileSystem.stat(await fileSystem.realPath(absolute));
  let files: { path: string; relative: string }[];
  const problems: string[] = [];
  if (stat?.kind === 'file') {
    files = [{ path: absolute, relative: path.posix.basename(absolute) }];
  } else {
    const ignoreRules = query.includeIgnored ? undefined : await IgnoreRules.forDirectory(fileSystem, workspace.root, absolute);
    // A glob selects among ignored files too, as ripgrep's --glob overrides ignore files.
    const walk = await walkTree(fileSystem, absolute, MAX_WALK_ENTRIES, { ...(ignoreRules ? { ignoreRules } : {}), includeIgnoredFiles: glob !== undefined, ...(signal ? { signal } : {}) });
    // One push per entry: a walk may report up to MAX_WALK_ENTRIES of them, too many for one call.
    for (const problem of walk.unreadable) problems.push(problem);
    if (walk.incomplete) problems.push(`stopped after ${MAX_WALK_ENTRIES} entries; search a smaller directory`);
    // ripgrep does not follow symlinks it meets while walking.
    files = walk.entries.filter((entry) => entry.kind === 'file' && (glob === undefined ? !entry.ignored : glob.matches(entry.relative)));
  }

  const matches: GrepMatch[] = [];
  let more = false;
  for (let start = 0; start < files.length && !more; start += READ_CONCURRENCY) {
    if (signal?.aborted) throw new Error('grep was interrupted');
    const batch = files.slice(start, start + READ_CONCURRENCY);
    const contents = await Promise.all(
      batch.map(async (file) => {
        try {
          const size = (await fileSystem.stat(file.path))?.size ?? 0;
          if (size > PORTABLE_GREP_MAX_FILE_BYTES) {
            problems.push(`${workspace.display(file.path)}: larger than ${PORTABLE_GREP_MAX_FILE_BYTES} bytes, not searched`);
            return undefined;
          }
          return await fileSystem.readFile(file.path);
        } catch (error) {
          problems.push(`${workspace.display(file.path)}: ${(error as Error).message}`);
          return undefined;
        }
      }),
    );
    batch.forEach((file, index) => {
      const bytes = contents[index];
      if (bytes === undefined || more || bytes.subarray(0, BINARY_SNIFF_BYTES).includes(0)) return;
      const lines = new TextDecoder('utf-8').decode(bytes).split('\n');
      if (lines.at(-1) === '') lines.pop();
      lines.forEach((raw, lineIndex) => {
        if (more) return;
        const text = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
        if (!expression.test(text)) return;
        if (matches.length === limit) {
          more = true;
          return;
        }
        matches.push({ file: workspace.display(file.path), line: lineIndex + 1, text });
      });
    });
  }
  return { matches, more, problems };
}
