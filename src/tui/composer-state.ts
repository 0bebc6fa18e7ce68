/**
 * The composer's text editing, without a terminal: multi-line text with a cursor, history of
 * sent prompts (Up/Down on the first/last line), large pastes kept whole behind a short
 * placeholder, and the word being completed (`@path` or `/command`).
 */

/** Pastes longer than this many characters (or lines) are shown as a placeholder. */
export const LARGE_PASTE_CHARACTERS = 800;
/** See `LARGE_PASTE_CHARACTERS`. */
export const LARGE_PASTE_LINES = 12;

/** The word being completed at the cursor. */
export interface CompletionWord {
  kind: 'file' | 'command';
  /** The text after `@` or `/`. */
  query: string;
  /** Offset of the `@` or `/` in the text. */
  start: number;
}

/** Text, cursor, history and pastes of the composer. */
export class ComposerState {
  text = '';
  /** Offset in `text` (UTF-16 units). */
  cursor = 0;
  private history: string[] = [];
  private historyIndex: number | undefined;
  private draft = '';
  private readonly pastes = new Map<string, string>();
  private pasteCount = 0;

  /** Inserts typed or pasted text at the cursor. A large paste becomes a placeholder. */
  insert(value: string): void {
    let text = value.replace(/\r\n?/g, '\n');
    const lines = text.split('\n').length;
    if (text.length > LARGE_PASTE_CHARACTERS || lines > LARGE_PASTE_LINES) {
      const placeholder = `[pasted text #${++this.pasteCount}: ${lines} lines, ${text.length} characters]`;
      this.pastes.set(placeholder, text);
      text = placeholder;
    }
    this.text = this.text.slice(0, this.cursor) + text + this.text.slice(this.cursor);
    this.cursor += text.length;
    this.historyIndex = undefined;
  }

  /** Deletes the character before the cursor. */
  backspace(): void {
    if (this.cursor === 0) return;
    const before = [...this.text.slice(0, this.cursor)];
    const removed = before.pop() ?? '';
    this.text = before.join('') + this.text.slice(this.cursor);
    this.cursor -= removed.length;
  }

  /** Deletes the character under the cursor. */
  deleteForward(): void {
    const after = [...this.text.slice(this.cursor)];
    after.shift();
    this.text = this.text.slice(0, this.cursor) + after.join('');
  }

  /** Deletes the word before the cursor (Ctrl+W). */
  deleteWord(): void {
    const before = this.text.slice(0, this.cursor).replace(/\S+\s*$/, '');
    this.text = before + this.text.slice(this.cursor);
    this.cursor = before.length;
  }

  /** Moves the cursor by characters. */
  move(characters: number): void {
    if (characters < 0) this.cursor = Math.max(0, this.cursor - ([...this.text.slice(0, this.cursor)].at(-1)?.length ?? 0));
    else if (characters > 0) this.cursor = Math.min(this.text.length, this.cursor + ([...this.text.slice(this.cursor)][0]?.length ?? 0));
  }

  /** Moves to the start or end of the current line. */
  lineEdge(end: boolean): void {
    if (end) {
      const next = this.text.indexOf('\n', this.cursor);
      this.cursor = next === -1 ? this.text.length : next;
    } else this.cursor = this.text.lastIndexOf('\n', this.cursor - 1) + 1;
  }

  /**
   * Up (-1) or Down (+1): moves between lines of the text, or through the history when on the
   * first or last line.
   */
  vertical(direction: -1 | 1): void {
    const lineStart = this.text.lastIndexOf('\n', this.cursor - 1) + 1;
    const column = this.cursor - lineStart;
    if (direction < 0 && lineStart > 0) {
      const previousStart = this.text.lastIndexOf('\n', lineStart - 2) + 1;
      this.cursor = Math.min(previousStart + column, lineStart - 1);
      return;
    }
    const lineEnd = this.text.indexOf('\n', this.cursor);
    if (direction > 0 && lineEnd !== -1) {
      const nextEnd = this.text.indexOf('\n', lineEnd + 1);
      this.cursor = Math.min(lineEnd + 1 + column, nextEnd === -1 ? this.text.length : nextEnd);
      return;
    }
    this.browseHistory(direction);
  }

  private browseHistory(direction: -1 | 1): void {
    if (this.history.length === 0) return;
    if (this.historyIndex === undefined) {
      if (direction > 0) return;
      this.draft = this.text;
      this.historyIndex = this.history.length - 1;
    } else {
      const next = this.historyIndex + direction;
      if (next >= this.history.length) {
        this.historyIndex = undefined;
        this.text = this.draft;
        this.cursor = this.text.length;
        return;
      }
      this.historyIndex = Math.max(0, next);
    }
    this.text = this.history[this.historyIndex] ?? '';
    this.cursor = this.text.length;
  }

  /** Replaces `[start, cursor)` with `replacement` (accepting a completion). */
  replaceWord(start: number, replacement: string): void {
    this.text = this.text.slice(0, start) + replacement + this.text.slice(this.cursor);
    this.cursor = start + replacement.length;
  }

  /** The `@file` or `/command` word ending at the cursor, if any. */
  completionWord(): CompletionWord | undefined {
    const before = this.text.slice(0, this.cursor);
    const command = /^\/([\w-]*)$/.exec(before);
    if (command) return { kind: 'command', query: command[1] ?? '', start: 0 };
    const file = /(^|\s)@([^\s@]*)$/.exec(before);
    if (file) return { kind: 'file', query: file[2] ?? '', start: before.length - (file[2] ?? '').length - 1 };
    return undefined;
  }

  /**
   * Takes the text to send: placeholders of pastes replaced by what was pasted; the text goes
   * into the history and the composer is emptied.
   */
  take(): string {
    const shown = this.text;
    let full = shown;
    for (const [placeholder, pasted] of this.pastes) full = full.split(placeholder).join(pasted);
    if (shown.trim() !== '' && this.history.at(-1) !== shown) this.history.push(shown);
    this.clear();
    return full;
  }

  /**
   * Gives back text that `take()` took (as it was shown, placeholders of pastes included) when
   * sending it failed, so that it can be corrected and sent again. Only into an empty composer:
   * text typed since is never replaced (the failed text stays in the history).
   * @returns whether the text was put back
   */
  restore(shown: string): boolean {
    if (this.text !== '') return false;
    this.text = shown;
    this.cursor = shown.length;
    this.historyIndex = undefined;
    return true;
  }

  /** Empties the text (history kept). */
  clear(): void {
    this.text = '';
    this.cursor = 0;
    this.historyIndex = undefined;
  }

  /** Adds earlier prompts to the history (oldest first), e.g. those of a resumed conversation. */
  seedHistory(prompts: string[]): void {
    this.history = [...prompts, ...this.history].slice(-500);
  }
}
