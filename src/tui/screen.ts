/**
 * The terminal UI's state and keys, independent of Ink: what is on screen (transcript window,
 * composer or approval prompt or question or picker, status) as ANSI lines for a terminal
 * size, and what each key does. `app.ts` feeds it keys and draws its lines; the render
 * benchmark drives it the same way.
 */
import type { RuntimeClient } from '../client/runtime-client.js';
import type { AnyNotification } from '../protocol/index.js';
import type { Key } from 'ink';
import { ComposerState } from './composer-state.js';
import { holdsSeveralKeys, splitKeystrokes } from './keystrokes.js';
import type { ConversationController } from './conversation-controller.js';
import { matchingCommands } from './commands.js';
import { activePlanLines, approvalLines, completionLines, composerLines, hintLine, queuedLines, questionLines, statusLine } from './panels.js';
import { applyListFeed, pickerLines, visibleItems, type PickerState } from './pickers.js';
import { runCommand, openPicker, choosePicker } from './screen-commands.js';
import { toAnsi, type StyledLine } from './styled-text.js';
import type { TranscriptEntry } from './transcript-model.js';
import { Viewport, type ScrollAnchor } from './viewport.js';

const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/** A suggestion of the completion list. */
export interface Suggestion {
  label: string;
  /** What replaces the word being completed. */
  replacement: string;
  detail?: string;
}

/** The whole UI state. */
export class TuiScreen {
  readonly composer = new ComposerState();
  readonly answer = new ComposerState();
  readonly viewport: Viewport;
  anchor: ScrollAnchor;
  toggles = { reasoning: false, output: false };
  picker: PickerState | undefined;
  suggestions: Suggestion[] = [];
  suggestionIndex = 0;
  approvalIndex = 0;
  questionIndex = 0;
  spinnerFrame = 0;
  size = { columns: 80, rows: 24 };
  exitRequested = false;
  private readonly pastes: string[] = [];
  private lastTop = { index: 0, line: 0 };
  private lastTranscriptHeight = 10;
  private listener: (() => void) | undefined;
  private completionRequest = 0;

  constructor(
    readonly controller: ConversationController,
    readonly client: RuntimeClient,
    color: boolean,
  ) {
    this.viewport = new Viewport(color);
    this.color = color;
    controller.model.onChange(() => this.changed());
    client.onNotification((event: AnyNotification) => this.onListFeed(event));
  }

  readonly color: boolean;

  /** Called whenever the screen should be drawn again. */
  onChange(listener: () => void): void {
    this.listener = listener;
  }

  /** Asks for a redraw. */
  changed(): void {
    this.listener?.();
  }

  /** Shows a line of the UI's own in the transcript. */
  notify(text: string, tone: 'info' | 'warning' | 'error' = 'info'): void {
    this.controller.model.addNotice(text, tone);
  }

  /**
   * Runs an action, showing its failure as an error notice instead of throwing.
   * @param typed what was typed to ask for the action (a prompt, a steer, a `/command`, an
   *   answer), as the composer showed it: when the action fails it comes back to `into`, to be
   *   corrected and sent again; if something else was typed meanwhile, that is kept and the
   *   notice says how to get the failed text back
   * @param into the composer `typed` came from (the prompt's, unless it was an answer)
   */
  attempt(work: () => Promise<unknown>, typed?: string, into: ComposerState = this.composer): void {
    work().then(
      () => this.changed(),
      (error: unknown) => this.notify(`${(error as Error).message}${typed === undefined ? '' : this.giveBack(typed, into)}`, 'error'),
    );
  }

  /**
   * Puts `typed`, whose sending failed, back into `into` when that is empty.
   * @returns what the error notice adds: nothing when it is back, else where to find it
   */
  giveBack(typed: string, into: ComposerState = this.composer): string {
    if (typed.trim() === '' || into.restore(typed)) return '';
    return into === this.composer ? '\n(not sent; ↑ recalls what you typed)' : '';
  }

  private onListFeed(event: AnyNotification): void {
    if (this.picker?.kind !== 'conversation') return;
    const items = applyListFeed(this.picker.items, event, this.picker.query);
    if (items) {
      this.picker.items = items;
      this.changed();
    }
  }

  /**
   * Keeps a whole paste (from `PasteSeparatingInput`) until Ink reports the `ESC[200~` that
   * marks its place among the keys, so that keys typed before it are handled first.
   */
  queuePaste(text: string): void {
    this.pastes.push(text);
  }

  /** Handles one key (or the place of a paste) as Ink's `useInput` reports it. */
  handleInput(input: string, key: Key): void {
    if (input === '[200~') {
      const text = this.pastes.shift();
      if (text !== undefined) (this.activeQuestion ? this.answer : this.composer).insert(text);
      this.changed();
      return;
    }
    // Ink reports an end marker itself only when stdin is not read through `PasteSeparatingInput`: it is no key.
    if (input === '[201~') return;
    // Keys typed faster than they are read arrive as one chunk; real pastes come bracketed.
    if (holdsSeveralKeys(input) && !key.ctrl && !key.meta) {
      for (const [one, itsKey] of splitKeystrokes(input)) this.handleInput(one, itsKey);
      return;
    }
    if (this.picker) this.pickerKey(input, key);
    else if (this.activeQuestion) this.questionKey(input, key);
    else if (this.activeApproval) this.approvalKey(input, key);
    else this.composerKey(input, key);
    this.changed();
  }

  get activeApproval() {
    return this.controller.model.pendingApprovals[0];
  }

  get activeQuestion() {
    return this.controller.model.pendingQuestions[0];
  }

  private scrollKey(key: Key): boolean {
    const page = Math.max(1, this.lastTranscriptHeight - 2);
    const entries = this.withHeader();
    const size = { width: this.size.columns, height: this.lastTranscriptHeight };
    const root = this.controller.model.rootSessionId;
    if (key.pageUp) {
      const next = this.viewport.scroll(entries, this.lastTop, page, size, root);
      if (next?.key === 'header' && this.controller.model.hasOlder) {
        // The page would reach past the items held: read the older ones first, then scroll from the same place.
        const from = { key: entries[this.lastTop.index]?.key, line: this.lastTop.line };
        this.attempt(async () => {
          await this.controller.loadOlder();
          const now = this.withHeader();
          const index = now.findIndex((entry) => entry.key === from.key);
          if (index >= 0) this.anchor = this.viewport.scroll(now, { index, line: from.line }, page, size, root);
        });
      } else this.anchor = next;
    }
    else if (key.pageDown) this.anchor = this.anchor ? this.viewport.scroll(entries, this.lastTop, -page, size, root) : undefined;
    else if (key.home) this.anchor = entries[0] ? { key: entries[0].key, line: 0 } : undefined;
    else if (key.end) this.anchor = undefined;
    else return false;
    return true;
  }

  private composerKey(input: string, key: Key): void {
    const model = this.controller.model;
    if (this.scrollKey(key)) return;
    if (key.ctrl && input === 'c') {
      if (this.composer.text !== '') this.composer.clear();
      else this.exitRequested = true;
    } else if (key.ctrl && input === 'd') {
      if (this.composer.text === '') this.exitRequested = true;
      else this.composer.deleteForward();
    } else if (key.escape) {
      if (this.suggestions.length > 0) this.suggestions = [];
      // Said only while the turn still runs: the server may announce its end before it answers.
      else if (model.running) this.attempt(async () => ((await this.controller.interrupt()) && this.controller.model.running ? this.notify('interrupting the turn…', 'warning') : undefined));
      return;
    } else if (key.ctrl && input === 'r') {
      this.toggles = { ...this.toggles, reasoning: !this.toggles.reasoning };
      this.viewport.setToggles(this.toggles);
    } else if (key.ctrl && input === 'o') {
      this.toggles = { ...this.toggles, output: !this.toggles.output };
      this.viewport.setToggles(this.toggles);
    } else if (key.ctrl && input === 's') {
      this.submit('steer');
      return;
    } else if (key.tab) {
      this.acceptSuggestion();
      return;
    } else if ((key.upArrow || key.downArrow) && this.suggestions.length > 0) {
      this.suggestionIndex = (this.suggestionIndex + (key.upArrow ? -1 : 1) + this.suggestions.length) % this.suggestions.length;
      return;
    } else if (key.upArrow || key.downArrow) this.composer.vertical(key.upArrow ? -1 : 1);
    else if (key.leftArrow) this.composer.move(-1);
    else if (key.rightArrow) this.composer.move(1);
    else if (key.ctrl && input === 'a') this.composer.lineEdge(false);
    else if (key.ctrl && input === 'e') this.composer.lineEdge(true);
    else if (key.ctrl && input === 'u') this.composer.clear();
    else if (key.ctrl && input === 'w') this.composer.deleteWord();
    else if (input === '\n' || (key.return && key.meta)) this.composer.insert('\n');
    else if (key.return) {
      if (this.suggestions.length > 0 && this.composer.completionWord()?.kind === 'file') {
        this.acceptSuggestion();
        return;
      }
      if (this.composer.text.endsWith('\\') && this.composer.cursor === this.composer.text.length) {
        this.composer.backspace();
        this.composer.insert('\n');
      } else this.submit('queue');
      return;
    } else if (key.backspace || key.delete) this.composer.backspace();
    else if (input && !key.ctrl && !key.meta) this.composer.insert(input);
    else return;
    this.updateSuggestions();
  }

  private submit(mode: 'queue' | 'steer'): void {
    if (this.suggestions.length > 0 && this.composer.completionWord()?.kind === 'command') this.acceptSuggestion();
    // As shown (pastes as placeholders): what comes back to the composer if sending fails.
    const typed = this.composer.text;
    const text = this.composer.take();
    this.suggestions = [];
    if (text.trim() === '') return;
    this.anchor = undefined;
    if (text.startsWith('/') && !text.startsWith('//')) {
      runCommand(this, text, typed);
      return;
    }
    const body = text.startsWith('//') ? text.slice(1) : text;
    this.attempt(async () => {
      const { queued } = await this.controller.send(body, mode);
      if (queued && mode === 'queue') this.notify('queued: it starts when the running turn ends (Ctrl+S steers the running turn instead)');
      else if (queued) this.notify('steering: the running turn reads it before its next model call');
    }, typed);
  }

  private acceptSuggestion(): void {
    const word = this.composer.completionWord();
    const chosen = this.suggestions[this.suggestionIndex];
    if (!word || !chosen) return;
    this.composer.replaceWord(word.start, chosen.replacement);
    this.updateSuggestions();
  }

  /** Recomputes the completion list for the word at the cursor (`/command` at once, `@file` from the server). */
  updateSuggestions(): void {
    const word = this.composer.completionWord();
    this.suggestionIndex = 0;
    if (!word) {
      this.suggestions = [];
      return;
    }
    if (word.kind === 'command') {
      this.suggestions = matchingCommands(word.query).map((command) => ({ label: `/${command.name}`, replacement: `/${command.name} `, detail: command.description }));
      return;
    }
    const conversationId = this.controller.conversationId;
    const slash = word.query.lastIndexOf('/');
    const directory = slash >= 0 ? word.query.slice(0, slash + 1) : '';
    const prefix = word.query.slice(slash + 1);
    const request = ++this.completionRequest;
    const list = conversationId
      ? this.client.request('fs/list', { conversationId, path: directory || '.' }).then((result) => result.entries)
      : import('./local-files.js').then(({ listLocalDirectory }) => listLocalDirectory(this.controller.pending.cwd, directory));
    list.then(
      (entries) => {
        if (request !== this.completionRequest) return;
        this.suggestions = entries
          .filter((entry) => entry.name.startsWith(prefix) && (prefix.startsWith('.') || !entry.name.startsWith('.')))
          .slice(0, 8)
          .map((entry) => {
            const path = `${directory}${entry.name}${entry.kind === 'directory' ? '/' : ''}`;
            return { label: `@${path}`, replacement: `@${path}${entry.kind === 'directory' ? '' : ' '}`, detail: entry.kind };
          });
        this.changed();
      },
      () => undefined,
    );
  }

  private approvalKey(input: string, key: Key): void {
    const request = this.activeApproval;
    if (!request) return;
    const options = request.options;
    if (this.scrollKey(key)) return;
    if (key.upArrow || key.downArrow) this.approvalIndex = (this.approvalIndex + (key.upArrow ? -1 : 1) + options.length) % options.length;
    const number = /^[1-9]$/.test(input) ? Number(input) - 1 : undefined;
    const chosen = number !== undefined ? options[number] : key.return ? options[this.approvalIndex] : key.escape ? options.find((option) => option.decision === 'deny_interrupt') : undefined;
    if (!chosen) return;
    this.approvalIndex = 0;
    this.attempt(async () => {
      const accepted = await this.controller.answerApproval(request.approvalId, chosen.decision, chosen.prefix);
      if (!accepted) this.notify('that approval was already answered elsewhere', 'warning');
    });
  }

  private questionKey(input: string, key: Key): void {
    const request = this.activeQuestion;
    if (!request) return;
    const choices = request.choices ?? [];
    const freeText = request.allowFreeText || choices.length === 0;
    if (this.scrollKey(key)) return;
    if (key.escape) {
      this.attempt(() => this.controller.interrupt());
      return;
    }
    if ((key.upArrow || key.downArrow) && choices.length > 0) {
      this.questionIndex = (this.questionIndex + (key.upArrow ? -1 : 1) + choices.length) % choices.length;
      return;
    }
    if (key.return) {
      const typed = this.answer.text.trim();
      const byNumber = /^\d+$/.test(typed) ? choices[Number(typed) - 1] : undefined;
      const answer = byNumber ?? (typed !== '' && freeText ? typed : choices[this.questionIndex]);
      if (answer === undefined || answer === '') return;
      const typedAnswer = this.answer.text;
      this.answer.clear();
      this.questionIndex = 0;
      this.attempt(
        async () => {
          if (!(await this.controller.answerQuestion(request.requestId, answer))) this.notify('that question was already answered or cancelled', 'warning');
        },
        typedAnswer,
        this.answer,
      );
      return;
    }
    if (key.backspace || key.delete) this.answer.backspace();
    else if (key.leftArrow) this.answer.move(-1);
    else if (key.rightArrow) this.answer.move(1);
    else if (input && !key.ctrl && !key.meta && (freeText || /^\d$/.test(input))) this.answer.insert(input);
  }

  private pickerKey(input: string, key: Key): void {
    const picker = this.picker as PickerState;
    const items = visibleItems(picker);
    if (key.escape || (key.ctrl && input === 'c')) this.picker = undefined;
    else if (key.upArrow || key.downArrow) picker.selected = items.length === 0 ? 0 : (picker.selected + (key.upArrow ? -1 : 1) + items.length) % items.length;
    else if (key.return) {
      const chosen = items[picker.selected];
      this.picker = undefined;
      if (chosen) choosePicker(this, picker, chosen.value);
    } else if (key.backspace || key.delete) this.setPickerQuery(picker, [...picker.query].slice(0, -1).join(''));
    else if (input && !key.ctrl && !key.meta) this.setPickerQuery(picker, picker.query + input);
  }

  private setPickerQuery(picker: PickerState, query: string): void {
    picker.query = query;
    picker.selected = 0;
    if (picker.serverSearch) openPicker(this, picker.kind, query);
  }

  /** The transcript's entries with the header entry first. */
  withHeader(): TranscriptEntry[] {
    const model = this.controller.model;
    const text = model.hasOlder ? 'loading older items…' : model.conversation ? `conversation ${model.conversation.id} · ${model.conversation.workLocation[0]?.cwd ?? ''}` : `new conversation in ${this.controller.pending.cwd} · type a prompt, or /help`;
    const header: TranscriptEntry = { key: 'header', notice: { text, tone: 'info' }, version: model.hasOlder ? 1 : 0 };
    this.headerEntry = this.headerEntry && this.headerEntry.notice?.text === text ? this.headerEntry : header;
    return [this.headerEntry, ...model.entries];
  }

  private headerEntry: TranscriptEntry | undefined;

  /** The screen as ANSI lines: exactly `rows - 1` of them (Ink redraws a full-height frame by clearing the terminal). */
  frame(): string[] {
    const { columns, rows } = this.size;
    const width = Math.max(20, columns);
    const height = Math.max(8, rows - 1);
    const model = this.controller.model;
    const bottom: StyledLine[] = [];
    const room = Math.max(3, Math.floor(height / 2));
    if (this.picker) bottom.push(...pickerLines(this.picker, width, Math.max(5, height - 4)));
    else if (this.activeQuestion) {
      const question = this.activeQuestion;
      bottom.push(...questionLines(question, composerLines(this.answer.text, this.answer.cursor, width, 3, 'your answer', '  answer › '), this.questionIndex, width));
    } else if (this.activeApproval) bottom.push(...approvalLines(this.activeApproval, this.approvalIndex, width, room, model.pendingApprovals.length));
    else {
      bottom.push(...activePlanLines(model, width, 6), ...queuedLines(model, width), ...completionLines(this.suggestions, this.suggestionIndex, width));
      bottom.push(...composerLines(this.composer.text, this.composer.cursor, width, 8, model.running ? 'Enter queues · Ctrl+S steers · Esc interrupts' : 'Ask for anything · / for commands · @ for files'));
    }
    const status = [statusLine(model, { ...this.controller.defaults, ...this.controller.pending }, SPINNER[this.spinnerFrame % SPINNER.length] ?? '', width), hintLine(model.running, this.anchor !== undefined, width)];
    const transcriptHeight = Math.max(1, height - bottom.length - status.length);
    this.lastTranscriptHeight = transcriptHeight;
    const entries = this.withHeader();
    const frame = this.viewport.frame(entries, this.anchor, { width, height: transcriptHeight }, model.rootSessionId);
    this.lastTop = frame.top;
    if (frame.atEnd && this.anchor) this.anchor = undefined;
    // Reaching the oldest item held loads the page before it.
    // Nearing the oldest item held reads the page before it ahead of the reader.
    if (frame.top.index <= 2 && model.hasOlder && !this.controller.loading) this.attempt(() => this.controller.loadOlder());
    return [...frame.lines, ...bottom.map((line) => toAnsi(line, this.color)), ...status.map((line) => toAnsi(line, this.color))].slice(0, height);
  }
}
