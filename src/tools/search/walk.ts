/**
 * Walking a directory tree through an executor's file system, for `glob` and the portable
 * `grep`. Directories are listed several at a time (an SSH round trip each), and the result
 * comes out in depth-first order with entries sorted by name, the order ripgrep's
 * `--sort path` prints in.
 */
import type { ExecutorFileSystem, FileKind } from '../../executors/executor.js';
import type { IgnoreRules } from './ignore-rules.js';

/** Directories never descended into: a repository's own data. */
export const ALWAYS_SKIPPED_DIRECTORIES: ReadonlySet<string> = new Set(['.git']);
/** Directories skipped like ignored ones unless ignored files are asked for: huge, and rarely what a search is for. */
export const DEFAULT_IGNORED_DIRECTORIES: ReadonlySet<string> = new Set(['node_modules']);
/** Directories listed at the same time. */
const LISTING_CONCURRENCY = 8;

/** One entry found by the walk. */
export interface WalkedEntry {
  /** Absolute path on the executor. */
  path: string;
  /** Path relative to the walk's start, with `/` separators. */
  relative: string;
  kind: FileKind;
  /** True when ignore files exclude it (listed only with `WalkOptions.includeIgnoredFiles`). */
  ignored: boolean;
}

/** How a walk treats ignore files. */
export interface WalkOptions {
  /**
   * Rules in force in the start directory (`IgnoreRules.forDirectory`); ignored directories
   * (and `node_modules`) are not entered. Absent: nothing is ignored but `.git`.
   */
  ignoreRules?: IgnoreRules;
  /** List files that ignore rules exclude too, marked `ignored` (directories are still skipped). */
  includeIgnoredFiles?: boolean;
  /** Stops the walk early (the result is then marked incomplete). */
  signal?: AbortSignal;
}

/** What a walk found. */
export interface WalkResult {
  /** Every file, symlink and other non-directory entry, in depth-first name order. */
  entries: WalkedEntry[];
  /** True when `maxEntries` stopped the walk early. */
  incomplete: boolean;
  /** Directories that could not be listed, with the reason. */
  unreadable: string[];
}

interface Node {
  entry: WalkedEntry;
  children?: Promise<Node[]>;
}

/**
 * Lists every non-directory entry below `start` (not following symlinks, skipping the
 * contents of `.git`, and with ignore rules the directories they exclude and `node_modules`).
 * @param fileSystem the executor's file system
 * @param start absolute directory to walk
 * @param maxEntries entries (of any kind) visited at most before the walk stops
 * @param options ignore rules and whether ignored files are listed; an abort signal
 */
export async function walkTree(fileSystem: ExecutorFileSystem, start: string, maxEntries: number, options: WalkOptions = {}): Promise<WalkResult> {
  const { signal } = options;
  let visited = 0;
  let incomplete = false;
  let active = 0;
  const queue: (() => void)[] = [];
  const unreadable: string[] = [];
  const withSlot = async <T>(work: () => Promise<T>): Promise<T> => {
    if (active >= LISTING_CONCURRENCY) await new Promise<void>((resolve) => queue.push(resolve));
    active += 1;
    try {
      return await work();
    } finally {
      active -= 1;
      queue.shift()?.();
    }
  };
  const list = (directory: string, relative: string, rules: IgnoreRules | undefined): Promise<Node[]> =>
    withSlot(async () => {
      if (signal?.aborted || visited >= maxEntries) {
        incomplete = true;
        return [];
      }
      let entries;
      try {
        entries = await fileSystem.readDirectory(directory);
      } catch (error) {
        unreadable.push(`${relative || '.'}: ${(error as Error).message}`);
        return [];
      }
      const inside = rules ? await rules.enter(fileSystem, directory, entries) : undefined;
      const nodes: Node[] = [];
      for (const entry of entries) {
        if (visited >= maxEntries) {
          incomplete = true;
          break;
        }
        visited += 1;
        const childRelative = relative === '' ? entry.name : `${relative}/${entry.name}`;
        const childPath = `${directory.replace(/\/$/, '')}/${entry.name}`;
        const isDirectory = entry.kind === 'directory';
        const ignored = inside !== undefined && ((isDirectory && DEFAULT_IGNORED_DIRECTORIES.has(entry.name)) || inside.ignores(childPath, isDirectory));
        const node: Node = { entry: { path: childPath, relative: childRelative, kind: entry.kind, ignored } };
        if (isDirectory) {
          if (!ignored && !ALWAYS_SKIPPED_DIRECTORIES.has(entry.name)) node.children = list(childPath, childRelative, inside);
        } else if (ignored && !options.includeIgnoredFiles) {
          continue;
        }
        nodes.push(node);
      }
      return nodes;
    });

  const found: WalkedEntry[] = [];
  const flatten = async (nodes: Node[]): Promise<void> => {
    for (const node of nodes) {
      if (node.entry.kind !== 'directory') found.push(node.entry);
      else if (node.children !== undefined) await flatten(await node.children);
    }
  };
  await flatten(await list(start, '', options.ignoreRules));
  return { entries: found, incomplete, unreadable };
}
