/**
 * Review comments on diffs of a conversation: line comments collected while reading file
 * changes, sent back to the agent as one input.
 */

/** One line comment. */
export interface ReviewComment {
  /** File path as the diff names it. */
  path: string;
  /** Line number in the new file (or the old one for a removed line). */
  line: number;
  /** `new` for added and context lines, `old` for removed lines. */
  side: 'old' | 'new';
  /** The line's text, quoted in the review. */
  code: string;
  text: string;
}

/** The comments waiting to be sent, per conversation. */
export class ReviewDraft {
  comments: ReviewComment[] = [];
  private readonly listeners = new Set<() => void>();

  /** Adds a change listener; returns its remover. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Adds a comment (an empty one is ignored). */
  add(comment: ReviewComment): void {
    if (comment.text.trim() === '') return;
    this.comments = [...this.comments, comment];
    this.changed();
  }

  /** Removes a comment by index. */
  remove(index: number): void {
    this.comments = this.comments.filter((_, at) => at !== index);
    this.changed();
  }

  /** Forgets every comment (after sending). */
  clear(): void {
    this.comments = [];
    this.changed();
  }

  private changed(): void {
    for (const listener of this.listeners) listener();
  }
}

/** The input text a review is sent as: one block per comment, with the line quoted. */
export function reviewText(comments: readonly ReviewComment[]): string {
  const blocks = comments.map((comment) => `${comment.path}:${comment.line}${comment.side === 'old' ? ' (removed line)' : ''}\n> ${comment.code}\n${comment.text.trim()}`);
  return `Review comments on your changes:\n\n${blocks.join('\n\n')}`;
}
