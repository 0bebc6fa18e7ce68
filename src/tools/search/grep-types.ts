/** What the two `grep` engines (ripgrep and portable) take and give. */

/** One search. */
export interface GrepQuery {
  /** Regular expression (or literal text with `literal`). */
  pattern: string;
  /** File or directory to search, relative to the workspace root (`.` for the root). */
  searchPath: string;
  /** Only files whose path matches this glob (see `compileGlob`). */
  glob?: string;
  ignoreCase: boolean;
  /** Take `pattern` as plain text, not a regular expression. */
  literal: boolean;
  /** Search files that ignore files exclude, and `node_modules`, too (`.git` never). */
  includeIgnored: boolean;
}

/** One matching line. */
export interface GrepMatch {
  /** File path relative to the workspace root. */
  file: string;
  /** 1-based line number. */
  line: number;
  /** The line's text, without its line break. */
  text: string;
}

/** Matches found, in path order, then line order. */
export interface GrepOutcome {
  matches: GrepMatch[];
  /** True when there were more matches than asked for. */
  more: boolean;
  /** Files or directories that could not be searched, with the reason. */
  problems: string[];
}
