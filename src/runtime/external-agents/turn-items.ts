/**
 * Turns the updates of an external agent into OpenVaala items (SPEC §3 "Item kinds"): text
 * and reasoning stream as `item/delta` and are stored whole when they end; a tool call is
 * announced with `item/started`, streams its output, and is stored with its result as one
 * `tool_call` item. Items still open when the turn ends are stored as `interrupted`.
 */
import { newId } from '../../ids.js';
import type { ItemStatus, ToolDetails } from '../../protocol/index.js';
import type { TurnContext } from '../turn-runner.js';

/** A text item in progress. */
interface OpenText {
  itemId: string;
  kind: 'assistant_message' | 'reasoning';
  text: string;
  /** Raw reasoning text streamed so far (reasoning items of agents that send it). */
  raw: string;
  createdAt: number;
}

/** A tool call in progress. */
export interface OpenToolCall {
  itemId: string;
  callId: string;
  toolName: string;
  arguments: unknown;
  details?: ToolDetails;
  output: string;
  createdAt: number;
}

/** What is known of a tool call when it starts. */
export interface ToolCallStart {
  toolName: string;
  arguments: unknown;
  details?: ToolDetails;
}

/** A tool call's result. */
export interface ToolCallResult {
  status: ItemStatus;
  /** The output as a whole (default: the streamed output). */
  output?: string;
  exitCode?: number | null;
  details?: ToolDetails;
  durationMs?: number;
}

/** The items of one turn of an external agent, keyed by the agent's own ids. */
export class ExternalTurnItems {
  private readonly texts = new Map<string, OpenText>();
  private readonly tools = new Map<string, OpenToolCall>();
  /** Tool calls this turn stored, by the agent's id (a late update of one is ignored). */
  private readonly finished = new Set<string>();

  /**
   * @param context the turn's context
   * @param model what assistant messages are attributed to (`acp/<agent>`, `codex/<model>`)
   */
  constructor(
    private readonly context: TurnContext,
    private readonly model: string,
  ) {}

  /** Adds text to the text item `key` (started on its first text). */
  appendText(key: string, kind: OpenText['kind'], delta: string, partIndex = 0): void {
    const open = this.openText(key, kind);
    open.text += delta;
    if (delta !== '') this.context.itemDelta(open.itemId, kind === 'assistant_message' ? { text: delta } : { reasoning: delta, partIndex });
  }

  /** Adds raw reasoning text (not the summary) to the reasoning item `key` (started on its first text). */
  appendRawReasoning(key: string, delta: string): void {
    const open = this.openText(key, 'reasoning');
    open.raw += delta;
    if (delta !== '') this.context.itemDelta(open.itemId, { reasoningRaw: delta });
  }

  private openText(key: string, kind: OpenText['kind']): OpenText {
    let open = this.texts.get(key);
    if (!open) {
      open = { itemId: newId('item'), kind, text: '', raw: '', createdAt: Date.now() };
      this.texts.set(key, open);
      this.context.itemStarted(open.itemId, kind, kind === 'assistant_message' ? { model: this.model } : {});
    }
    return open;
  }

  /** Stores the text item `key`; `text` (when given) replaces what was streamed. Nothing happens for an unknown key without text. */
  async finishText(key: string, kind: OpenText['kind'], text?: string, status: ItemStatus = 'completed'): Promise<void> {
    if (text !== undefined && !this.texts.has(key)) this.appendText(key, kind, '');
    const open = this.texts.get(key);
    if (!open) return;
    this.texts.delete(key);
    const whole = text ?? open.text;
    const base = { id: open.itemId, sessionId: this.context.sessionId, turnId: this.context.turnId, createdAt: open.createdAt, completedAt: Date.now(), status };
    if (open.kind === 'assistant_message') await this.context.record({ ...base, kind: 'assistant_message', text: whole, model: this.model });
    else await this.context.record({ ...base, kind: 'reasoning', summary: whole, summaryParts: [whole], ...(open.raw !== '' ? { rawText: open.raw } : {}) });
  }

  /**
   * Stores the reasoning item `key` as the agent finally gave it: its summary parts (replacing
   * what was streamed) and its raw reasoning text (replacing the raw text streamed, when given).
   * Started here when nothing of it was streamed; nothing is stored when it has neither.
   */
  async finishReasoning(key: string, parts: readonly string[], rawText?: string): Promise<void> {
    const summaryParts = parts.filter((part) => part !== '');
    if (summaryParts.length === 0 && !rawText && !this.texts.has(key)) return;
    const open = this.openText(key, 'reasoning');
    this.texts.delete(key);
    const raw = rawText ?? open.raw;
    const summary = summaryParts.length > 0 ? summaryParts.join('\n\n') : open.text;
    await this.context.record({
      id: open.itemId,
      sessionId: this.context.sessionId,
      turnId: this.context.turnId,
      createdAt: open.createdAt,
      completedAt: Date.now(),
      status: 'completed',
      kind: 'reasoning',
      summary,
      summaryParts: summaryParts.length > 0 ? summaryParts : [summary],
      ...(raw !== '' ? { rawText: raw } : {}),
    });
  }

  /** Stores every open text item (an agent whose chunks carry no ids ends one when something else comes). */
  async finishTexts(status: ItemStatus = 'completed'): Promise<void> {
    for (const [key, open] of [...this.texts]) await this.finishText(key, open.kind, undefined, status);
  }

  /** The tool call `key`, while it is open. */
  toolCall(key: string): OpenToolCall | undefined {
    return this.tools.get(key);
  }

  /** Whether the tool call `key` was stored already. */
  isFinished(key: string): boolean {
    return this.finished.has(key);
  }

  /** Announces the tool call `key` (again: its details are updated, nothing is announced). */
  startToolCall(key: string, start: ToolCallStart): OpenToolCall {
    const known = this.tools.get(key);
    if (known) {
      if (start.details) known.details = start.details;
      return known;
    }
    const call: OpenToolCall = { itemId: newId('item'), callId: key, toolName: start.toolName, arguments: start.arguments, ...(start.details ? { details: start.details } : {}), output: '', createdAt: Date.now() };
    this.tools.set(key, call);
    this.context.itemStarted(call.itemId, 'tool_call', { callId: key, toolName: call.toolName, arguments: call.arguments, ...(call.details ? { details: call.details } : {}) });
    return call;
  }

  /** Streams output of the tool call `key`. */
  toolOutput(key: string, delta: string): void {
    const call = this.tools.get(key);
    if (!call || delta === '') return;
    call.output += delta;
    this.context.itemDelta(call.itemId, { output: delta });
  }

  /** Stores the tool call `key` with its result. */
  async finishToolCall(key: string, result: ToolCallResult): Promise<void> {
    const call = this.tools.get(key);
    if (!call) return;
    this.tools.delete(key);
    this.finished.add(key);
    const now = Date.now();
    const output = result.output ?? call.output;
    const details = result.details ?? call.details;
    const isError = result.status !== 'completed' || (result.exitCode !== undefined && result.exitCode !== null && result.exitCode !== 0);
    await this.context.record({
      id: call.itemId,
      sessionId: this.context.sessionId,
      turnId: this.context.turnId,
      createdAt: call.createdAt,
      completedAt: now,
      status: result.status,
      kind: 'tool_call',
      callId: call.callId,
      toolName: call.toolName,
      arguments: call.arguments,
      output,
      isError,
      ...(result.exitCode !== undefined ? { exitCode: result.exitCode } : {}),
      ...(details ? { details } : {}),
      durationMs: result.durationMs ?? now - call.createdAt,
    });
  }

  /** Stores everything still open with `status` (the turn ended while they were in progress). */
  async finishAll(status: ItemStatus): Promise<void> {
    await this.finishTexts(status);
    for (const key of [...this.tools.keys()]) await this.finishToolCall(key, { status });
  }
}
