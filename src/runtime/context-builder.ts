/**
 * Builds the model request from a session's items (SPEC §3: the model context is built from
 * items). Tool calls and results are one item each, so every call in the request is paired
 * with its result and providers always accept the transcript.
 */
import type { AssistantModelMessage, ModelMessage, ToolModelMessage, UserContent } from 'ai';

type ProviderOptions = NonNullable<AssistantModelMessage['providerOptions']>;
import type { ContentPart, Item } from '../protocol/index.js';
import { DEFAULT_TOOL_OUTPUT_LIMIT_BYTES } from '../tools/tool.js';
import { toolOutputForModel } from '../tools/terminal-text.js';
import { classifyAttachment } from './attachments.js';

function userContent(parts: ContentPart[], readAttachment: ModelMessageOptions['readAttachment']): UserContent {
  return parts.map((part) => {
    if (part.type === 'text') return { type: 'text' as const, text: part.text };
    if (part.type === 'image') return { type: 'image' as const, image: new URL(part.url), ...(part.mediaType ? { mediaType: part.mediaType } : {}) };
    if (part.attachmentId !== undefined) return attachmentContent(part.name ?? part.path, readAttachment?.(part.attachmentId));
    return { type: 'text' as const, text: `[attached file: ${part.path}]` };
  });
}

/** An uploaded file as the model reads it: the image itself, or the text under a line naming it. */
function attachmentContent(name: string, bytes: Uint8Array | undefined) {
  if (bytes === undefined) return { type: 'text' as const, text: `[attached file ${name}: no longer available]` };
  const content = classifyAttachment(bytes);
  if (content.kind === 'image') return { type: 'image' as const, image: bytes, mediaType: content.mediaType };
  if (content.kind === 'text') return { type: 'text' as const, text: `[attached file ${name}]\n${new TextDecoder().decode(bytes)}` };
  return { type: 'text' as const, text: `[attached file ${name}: not an image or text]` };
}

/** Options of `buildModelMessages`. */
export interface ModelMessageOptions {
  /** Cap on one tool result's text as the model reads it, in bytes (default `DEFAULT_TOOL_OUTPUT_LIMIT_BYTES`). */
  toolOutputLimitBytes?: number;
  /**
   * `provider/model` the request is for. Reasoning recorded by any other model (or by an
   * unknown one) is left out, and so are the provider data of its tool calls (Gemini's thought
   * signatures; the calls themselves stay): signed or encrypted reasoning is bound to the model that wrote it
   * (Anthropic refuses another model's thinking signature; OpenAI's encrypted reasoning only
   * decrypts for its model), and its readable summary would read to the new model as words it
   * said itself. The answers and tool calls around it stay, so the work is not lost. Absent =
   * every reasoning item is sent.
   */
  model?: string;
  /**
   * Reads an uploaded attachment of the conversation by id (`file` parts with an
   * `attachmentId`); absent or undefined = the model is told the file is not available.
   */
  readAttachment?: (attachmentId: string) => Uint8Array | undefined;
}

/** The model's text of each tool_call item, per cap: the same item is converted on every model call of a session. */
const modelTextCache = new WeakMap<Item, { limit: number; text: string }>();

/** Text of the tool result as the model sees it: cut to the cap and cleaned of terminal control. */
function toolOutputText(item: Extract<Item, { kind: 'tool_call' }>, limitBytes: number): string {
  const cached = modelTextCache.get(item);
  if (cached?.limit === limitBytes) return cached.text;
  const text = toolOutputForModel(item.output, limitBytes);
  modelTextCache.set(item, { limit: limitBytes, text });
  return text;
}

/**
 * Converts items, oldest first, into AI SDK model messages.
 *
 * Consecutive assistant text and tool calls of one step become one assistant message,
 * followed by one tool message with their results in the same order. Items the model does
 * not need (errors, markers, hook runs, answers and reasoning the provider cut off) are left out; instructions become user-visible
 * context in a user message, so no provider rejects a mid-conversation system message.
 * Tool results are cut to `options.toolOutputLimitBytes` and cleaned of terminal control
 * (`toolOutputForModel`): the one place the model's cap is applied.
 */
export function buildModelMessages(items: Item[], options: ModelMessageOptions = {}): ModelMessage[] {
  return convertItems(itemsInContext(items), { ...options, toolOutputLimitBytes: options.toolOutputLimitBytes ?? DEFAULT_TOOL_OUTPUT_LIMIT_BYTES });
}

/**
 * The items a request is built from. After compaction: the standing instructions from before
 * the summary (AGENTS.md files and loaded skills, which a summary must not paraphrase away),
 * the latest summary, the latest user request it covered (so the agent keeps its live task
 * verbatim), then everything after it.
 */
export function itemsInContext(items: Item[]): Item[] {
  let summaryIndex = -1;
  for (let index = items.length - 1; index >= 0; index--) {
    if (items[index]?.kind === 'context_summary') {
      summaryIndex = index;
      break;
    }
  }
  if (summaryIndex < 0) return items;
  const summary = items[summaryIndex] as Item;
  const kept = keptByCompaction(items.slice(0, summaryIndex));
  return [...kept.standing, summary, ...(kept.latestRequest ? [kept.latestRequest] : []), ...items.slice(summaryIndex + 1)];
}

/**
 * What a compaction of these items keeps verbatim besides its summary: the standing
 * instructions (AGENTS.md files and loaded skills) and the latest user (or parent agent)
 * request.
 */
export function keptByCompaction(items: Item[]): { standing: Item[]; latestRequest: Item | undefined } {
  const latestRequest = items.findLast((item) => (item.kind === 'user_message' && item.mode === 'input' && item.status !== 'failed') || item.kind === 'agent_message');
  const standing = items.filter((item) => item.kind === 'instruction' && (item.source === 'agents_md' || item.source === 'client' || (item.source === 'skill' && item.name !== 'skill-problems')));
  return { standing, latestRequest };
}

/** A call's provider data (Gemini's thought signature), only for the model that made the call. */
function callProviderOptions(item: Extract<Item, { kind: 'tool_call' }>, options: ModelMessageOptions): { providerOptions?: ProviderOptions } {
  const data = item.providerData as { model?: string; metadata?: ProviderOptions } | undefined;
  if (!data?.metadata || (options.model !== undefined && data.model !== options.model)) return {};
  return { providerOptions: data.metadata };
}

function convertItems(items: Item[], options: ModelMessageOptions & { toolOutputLimitBytes: number }): ModelMessage[] {
  const toolOutputLimitBytes = options.toolOutputLimitBytes;
  const messages: ModelMessage[] = [];
  let assistant: AssistantModelMessage | undefined;
  let results: ToolModelMessage | undefined;

  const flush = () => {
    if (assistant) messages.push(assistant);
    if (results) messages.push(results);
    assistant = undefined;
    results = undefined;
  };
  const assistantParts = (): Exclude<AssistantModelMessage['content'], string> => {
    // A text part after tool calls starts a new step: the previous one must be closed first.
    assistant ??= { role: 'assistant', content: [] };
    return assistant.content as Exclude<AssistantModelMessage['content'], string>;
  };

  for (const item of items) {
    switch (item.kind) {
      case 'user_message':
        // A prompt refused by a user_prompt_submit hook (recorded `failed` in logs written before refused prompts were left out) is not context.
        if (item.status === 'failed') break;
        flush();
        messages.push({ role: 'user', content: userContent(item.content, options.readAttachment) });
        break;
      case 'agent_message':
        flush();
        messages.push({ role: 'user', content: item.text });
        break;
      case 'instruction':
        flush();
        messages.push({ role: 'user', content: `<instructions source="${item.source}" name="${item.name}">\n${item.body}\n</instructions>` });
        break;
      case 'context_summary':
        flush();
        messages.push({ role: 'user', content: `Summary of the conversation so far:\n${item.text}` });
        break;
      case 'reasoning': {
        if (options.model !== undefined && item.model !== options.model) break;
        // Reasoning cut short (the stream broke, the turn was interrupted) has no signature or
        // encrypted content to send back, and providers refuse thinking blocks without them.
        if (item.status !== 'completed') break;
        if (results) flush();
        const parts = (item.providerData?.parts as { text: string; providerMetadata?: Record<string, Record<string, unknown>> }[] | undefined) ?? [{ text: item.summary }];
        for (const part of parts) {
          assistantParts().push({ type: 'reasoning', text: part.text, ...(part.providerMetadata ? { providerOptions: part.providerMetadata as ProviderOptions } : {}) });
        }
        break;
      }
      case 'assistant_message':
        // An answer the provider cut off (`failed`) is not context: it was retried, or the turn
        // failed with it; sent back, the model would read its own half answer as said. An
        // interrupted one stays: the user saw it and stopped it there.
        if (item.status === 'failed') break;
        if (results) flush();
        if (item.text) assistantParts().push({ type: 'text', text: item.text });
        break;
      case 'tool_call':
        assistantParts().push({ type: 'tool-call', toolCallId: item.callId, toolName: item.toolName, input: item.arguments ?? {}, ...callProviderOptions(item, options) });
        results ??= { role: 'tool', content: [] };
        results.content.push({
          type: 'tool-result',
          toolCallId: item.callId,
          toolName: item.toolName,
          output: item.isError ? { type: 'error-text', value: toolOutputText(item, toolOutputLimitBytes) } : { type: 'text', value: toolOutputText(item, toolOutputLimitBytes) },
        });
        break;
      default:
        break;
    }
  }
  flush();
  return messages;
}
