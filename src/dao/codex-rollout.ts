/**
 * Turns a Codex session rollout (`~/.codex/sessions/…/rollout-*.jsonl`, as codex-cli 0.171.0
 * writes it: one `{timestamp, type, payload}` per line) into a conversation archive that
 * `conversation/import` stores (SPEC §2 `openvaala import --from codex`; docs/storage.md,
 * "Importing a Codex session").
 *
 * The model history of a rollout is its `response_item` lines; they become items: user
 * `message` → `user_message` (its texts and images), assistant `message` →
 * `assistant_message`, `reasoning` → `reasoning` (summary; encrypted content kept as provider
 * data and never sent back, since it is bound to the Codex account's model), `function_call` /
 * `custom_tool_call` / `local_shell_call` with their outputs → one `tool_call` each (a call without output is
 * `interrupted`). User messages that Codex writes itself (`<environment_context>`,
 * `<user_instructions>` → an `instruction` item) and developer messages are not user input.
 * A provider `web_search_call` becomes a `web_search` tool call saying what was searched; a
 * `compacted` line (Codex's summary of the history so far) a `context_summary`; a tool's
 * images in its output a placeholder naming each; a refusal the assistant message's text.
 * `event_msg` lines give turns (`task_started` / `task_complete` / `turn_aborted`), exit codes
 * and durations of commands (`item_completed` of a `CommandExecution`, or `exec_command_end`),
 * failed patches (`patch_apply_end`) and token counts.
 */
import { newId } from '../ids.js';
import { CodexIdError, fromCodexId } from '../protocol/codex-ids.js';
import type { ContentPart, Conversation, Item, Session, TokenUsage, Turn } from '../protocol/index.js';
import type { ConversationArchive } from './conversation-archive.js';
import type { MetadataEntry } from './metadata-log.js';
import { jsonSyntaxProblem } from '../printable-text.js';

/** A rollout that cannot be read: the message names the line at fault. */
export class CodexRolloutError extends Error {
  constructor(message: string, line?: number) {
    super(line === undefined ? message : `line ${line}: ${message}`);
    this.name = 'CodexRolloutError';
  }
}

/** Choices the rollout cannot make: what the conversation continues with here. */
export interface CodexImportOptions {
  /** `provider/model` the session continues with (Codex's own model is kept on its items). */
  model: string;
  /** Agent the session continues with. */
  agent: string;
  /** Working directory of the conversation; default the rollout's `cwd`. */
  cwd?: string;
  /** Executor of the work location; default `local`. */
  executor?: string;
}

type Payload = Record<string, unknown>;
type Line = { number: number; time: number; type: string; payload: Payload };

const ZERO_USAGE: TokenUsage = { inputTokens: 0, outputTokens: 0, totalTokens: 0 };
const TITLE_LENGTH = 80;

function text(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** The text of a message's content parts (`input_text`, `output_text`, `text`, a `refusal`'s words). */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((part: { text?: unknown; refusal?: unknown }) => text(part?.text) || text(part?.refusal)).join('');
}

/** What stands for an image in a text: its media type and size for a data URL, else its URL. */
function imagePlaceholder(url: string): string {
  const data = /^data:([\w.+-]+\/[\w.+-]+)?(;base64)?,(.*)$/s.exec(url);
  if (!data) return `[image ${url}]`;
  const bytes = data[2] ? Math.floor((data[3] as string).replace(/=+$/, '').length * 0.75) : decodeURIComponent(data[3] as string).length;
  return `[image ${data[1] ?? 'data'}, ${bytes} bytes]`;
}

/**
 * The parts of a user message in order: texts (`input_text`, `text`, or the message as one
 * string) and images (`input_image`, whose `image_url` is a data URL or a URL, as the Responses
 * API takes it). Parts of other types carry nothing the conversation can show or send back.
 */
function userParts(content: unknown): ContentPart[] {
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  if (!Array.isArray(content)) return [];
  const parts: ContentPart[] = [];
  for (const part of content as { type?: unknown; text?: unknown; image_url?: unknown }[]) {
    if (part?.type === 'input_image' && typeof part.image_url === 'string' && part.image_url !== '') {
      const mediaType = /^data:([\w.+-]+\/[\w.+-]+)[;,]/.exec(part.image_url)?.[1];
      parts.push({ type: 'image', url: part.image_url, ...(mediaType ? { mediaType } : {}) });
    } else if (text(part?.text) !== '') {
      parts.push({ type: 'text', text: text(part.text) });
    }
  }
  return parts;
}

/** Whether a user message part is the project instructions Codex sends (`<user_instructions>` in older versions; in 0.171 `# AGENTS.md instructions for <dir>` around `<INSTRUCTIONS>`). */
function isProjectInstructions(part: string): boolean {
  return part.startsWith('<user_instructions>') || (/^# AGENTS\.md instructions for /.test(part) && part.includes('<INSTRUCTIONS>'));
}

/** A tool output as Codex stores it: a string, `{content}`, or a list of content parts. */
function outputText(output: unknown): string {
  if (typeof output === 'string') return output;
  // Images a tool returned (view_image, an MCP tool) become a placeholder naming them: the output is text.
  if (Array.isArray(output)) return output.map((part: { type?: unknown; image_url?: unknown }) => (part?.type === 'input_image' && typeof part.image_url === 'string' ? imagePlaceholder(part.image_url) : contentText([part]))).join('');
  if (output && typeof output === 'object') return outputText((output as { content?: unknown }).content);
  return '';
}

/** A command's exit code (null when it has none, e.g. killed) and duration (Codex's `{secs, nanos}`) in ms. */
function commandResult(exitCode: unknown, duration: unknown): { exitCode: number | null; durationMs: number } {
  const { secs, nanos } = (duration ?? {}) as { secs?: unknown; nanos?: unknown };
  const durationMs = (typeof secs === 'number' ? secs * 1000 : 0) + (typeof nanos === 'number' ? nanos / 1e6 : 0);
  return { exitCode: typeof exitCode === 'number' && Number.isInteger(exitCode) ? exitCode : null, durationMs };
}

/**
 * The exit code Codex's command tools write in the header of their output, before the
 * `Output:` line (`Process exited with code N` in 0.171, `Exit code: N` before), if any. Only
 * the header is read, so a command's own output that happens to say the same is not taken.
 */
function exitCodeInOutput(output: string): number | undefined {
  const end = output.indexOf('\nOutput:\n');
  if (end < 0) return undefined;
  const match = /^(?:Process exited with code|Exit code:) (-?\d+)$/m.exec(output.slice(0, end));
  return match ? Number(match[1]) : undefined;
}

function usageOf(info: unknown): TokenUsage | undefined {
  const total = (info as { total_token_usage?: Record<string, unknown> } | undefined)?.total_token_usage;
  if (!total) return undefined;
  const count = (key: string) => (typeof total[key] === 'number' && Number.isInteger(total[key]) && (total[key] as number) >= 0 ? (total[key] as number) : 0);
  return { inputTokens: count('input_tokens'), outputTokens: count('output_tokens'), totalTokens: count('total_tokens'), cachedInputTokens: count('cached_input_tokens'), reasoningTokens: count('reasoning_output_tokens') };
}

function difference(after: TokenUsage, before: TokenUsage): TokenUsage {
  const minus = (key: keyof TokenUsage) => Math.max(0, (after[key] ?? 0) - (before[key] ?? 0));
  return { inputTokens: minus('inputTokens'), outputTokens: minus('outputTokens'), totalTokens: minus('totalTokens'), cachedInputTokens: minus('cachedInputTokens'), reasoningTokens: minus('reasoningTokens') };
}

/** Reads the lines: each must be a JSON object with a string `type` and an object `payload`. */
function readLines(rollout: string): Line[] {
  const lines: Line[] = [];
  rollout.split('\n').forEach((raw, index) => {
    if (raw.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch (error) {
      throw new CodexRolloutError(`not valid JSON (${jsonSyntaxProblem(error)})`, index + 1);
    }
    const line = value as { timestamp?: unknown; type?: unknown; payload?: unknown };
    if (typeof line !== 'object' || line === null || typeof line.type !== 'string') throw new CodexRolloutError('type: expected a string (a rollout line is {timestamp, type, payload})', index + 1);
    if (typeof line.payload !== 'object' || line.payload === null) throw new CodexRolloutError('payload: expected an object', index + 1);
    const time = typeof line.timestamp === 'string' ? Date.parse(line.timestamp) : NaN;
    lines.push({ number: index + 1, time: Number.isFinite(time) ? time : (lines.at(-1)?.time ?? 0), type: line.type, payload: line.payload as Payload });
  });
  return lines;
}

/** The conversation id of a Codex session id: the same 128 bits (`fromCodexId`), or a new id when it is not a UUID. */
function conversationIdOf(codexSessionId: string): string {
  try {
    return fromCodexId(codexSessionId, 'conv');
  } catch (error) {
    if (error instanceof CodexIdError) return newId('conv');
    throw error;
  }
}

/**
 * Converts a rollout's text into an archive of a new conversation. Its id is the Codex
 * session's (`session_meta` `id`) by the Codex id rule (`fromCodexId`), so the same rollout
 * imported twice names the same conversation and the second import is refused like a second
 * import of an archive (and Codex app-server clients see the thread id Codex gave it); a
 * session id that is not a UUID gets a new id. Session, turn and item ids are new.
 * @throws CodexRolloutError naming the line for text that is not a rollout, or when there is no `session_meta` line
 */
export function convertCodexRollout(rollout: string, options: CodexImportOptions): ConversationArchive {
  const lines = readLines(rollout);
  const meta = lines.find((line) => line.type === 'session_meta');
  if (!meta) throw new CodexRolloutError('no session_meta line: this is not a Codex session rollout');
  const conversationId = conversationIdOf(text(meta.payload.id));
  const sessionId = newId('sess');
  const cwd = options.cwd ?? text(meta.payload.cwd);
  if (!cwd.startsWith('/')) throw new CodexRolloutError(`session_meta cwd: expected an absolute directory, got ${JSON.stringify(meta.payload.cwd)}`, meta.number);
  const provider = text(meta.payload.model_provider) || 'codex';
  let codexModel = 'unknown';
  const items: Item[] = [];
  const turns = new Map<string, Turn>();
  const turnIds = new Map<string, string>();
  let current: Turn | undefined;
  let usageBefore: TokenUsage = ZERO_USAGE;
  let usageNow: TokenUsage = ZERO_USAGE;
  const calls = new Map<string, Extract<Item, { kind: 'tool_call' }>>();
  const commandResults = new Map<string, { exitCode: number | null; durationMs: number }>();
  const patchSucceeded = new Map<string, boolean>();

  const startTurn = (codexTurnId: string | undefined, time: number): Turn => {
    const id = newId('turn');
    if (codexTurnId) turnIds.set(codexTurnId, id);
    usageBefore = usageNow;
    const turn: Turn = { id, sessionId, conversationId, status: 'completed', steps: 0, usage: ZERO_USAGE, startedAt: time, completedAt: time };
    turns.set(id, turn);
    current = turn;
    return turn;
  };
  const endTurn = (status: Turn['status'], time: number): void => {
    if (!current) return;
    current.status = status;
    current.completedAt = time;
    current.usage = difference(usageNow, usageBefore);
    current = undefined;
  };
  const turnFor = (line: Line): Turn => current ?? startTurn(undefined, line.time);
  const base = (line: Line) => ({ id: newId('item'), sessionId, turnId: turnFor(line).id, createdAt: line.time, completedAt: line.time, status: 'completed' as const });

  for (const line of lines) {
    const payload = line.payload;
    if (line.type === 'turn_context') {
      codexModel = text(payload.model) || codexModel;
    } else if (line.type === 'event_msg') {
      const kind = payload.type;
      if (kind === 'task_started') {
        // A turn made up for items before any task_started (older rollouts) ended normally.
        endTurn(current && !turnIds.size ? 'completed' : 'interrupted', line.time);
        startTurn(text(payload.turn_id) || undefined, line.time);
      } else if (kind === 'task_complete') {
        endTurn('completed', line.time);
      } else if (kind === 'turn_aborted') {
        endTurn('interrupted', line.time);
      } else if (kind === 'token_count') {
        const usage = usageOf(payload.info);
        if (usage) {
          usageNow = usage;
          if (current) current.steps += 1;
        }
      } else if (kind === 'item_completed') {
        const item = payload.item as { type?: unknown; id?: unknown; exit_code?: unknown; duration?: unknown } | undefined;
        if (item?.type === 'CommandExecution' && typeof item.id === 'string') commandResults.set(item.id, commandResult(item.exit_code, item.duration));
      } else if (kind === 'exec_command_end' && typeof payload.call_id === 'string') {
        // Older rollouts: the end of a command as its own event, keyed by the call id.
        commandResults.set(payload.call_id, commandResult(payload.exit_code, payload.duration));
      } else if (kind === 'patch_apply_end' && typeof payload.call_id === 'string' && typeof payload.success === 'boolean') {
        patchSucceeded.set(payload.call_id, payload.success);
      }
    } else if (line.type === 'compacted') {
      // Codex replaced the history so far with a summary: the same as a compaction here.
      const summary = text(payload.message);
      const last = items.at(-1);
      if (summary !== '' && last !== undefined) items.push({ ...base(line), kind: 'context_summary', text: summary, lastItemId: last.id });
    } else if (line.type === 'response_item') {
      const kind = payload.type;
      if (kind === 'message') {
        const body = contentText(payload.content);
        if (payload.role === 'user') {
          // Codex writes its context into user messages, alone or as parts of one message (0.171:
          // the AGENTS.md text and the environment context as two parts): only the rest is user input.
          const typed: ContentPart[] = [];
          for (const part of userParts(payload.content)) {
            if (part.type === 'text') {
              if (part.text.startsWith('<environment_context>')) continue;
              if (isProjectInstructions(part.text)) {
                items.push({ ...base(line), kind: 'instruction', source: 'agents_md', name: 'AGENTS.md', body: part.text });
                continue;
              }
              const previous = typed.at(-1);
              if (previous?.type === 'text') previous.text += part.text;
              else typed.push({ ...part });
            } else {
              typed.push(part);
            }
          }
          if (typed.length > 0) items.push({ ...base(line), kind: 'user_message', content: typed, mode: 'input' });
        } else if (payload.role === 'assistant') {
          items.push({ ...base(line), kind: 'assistant_message', text: body, model: `${provider}/${codexModel}` });
        }
      } else if (kind === 'reasoning') {
        const parts = Array.isArray(payload.summary) ? payload.summary.map((part: { text?: unknown }) => text(part?.text)).filter((part) => part !== '') : [];
        const raw = contentText(payload.content);
        items.push({
          ...base(line),
          kind: 'reasoning',
          summary: parts.join('\n\n'),
          summaryParts: parts,
          ...(raw ? { rawText: raw } : {}),
          ...(typeof payload.encrypted_content === 'string' ? { providerData: { codex: { encryptedContent: payload.encrypted_content, model: `${provider}/${codexModel}` } } } : {}),
        });
      } else if (kind === 'web_search_call') {
        // The provider's own search: what was searched is kept; its results were never in the history.
        const action = (payload.action ?? {}) as { query?: unknown };
        const searched = text(action.query);
        items.push({ ...base(line), kind: 'tool_call', callId: text(payload.id) || newId('call'), toolName: 'web_search', arguments: payload.action ?? {}, executor: options.executor ?? 'local', output: searched ? `searched the web for: ${searched}` : 'searched the web', isError: payload.status === 'failed', durationMs: 0 });
      } else if (kind === 'function_call' || kind === 'custom_tool_call' || kind === 'local_shell_call') {
        const callId = text(payload.call_id) || text(payload.id) || newId('call');
        let args: unknown = kind === 'custom_tool_call' ? payload.input : kind === 'local_shell_call' ? payload.action : payload.arguments;
        if (kind === 'function_call' && typeof args === 'string') {
          try {
            args = JSON.parse(args);
          } catch {
            // Kept as the model wrote it.
          }
        }
        const call: Extract<Item, { kind: 'tool_call' }> = { ...base(line), status: 'interrupted', kind: 'tool_call', callId, toolName: kind === 'local_shell_call' ? 'shell' : text(payload.name) || 'unknown', arguments: args ?? {}, executor: options.executor ?? 'local', output: '', isError: true, durationMs: 0 };
        calls.set(callId, call);
        items.push(call);
      } else if (kind === 'function_call_output' || kind === 'custom_tool_call_output') {
        const call = calls.get(text(payload.call_id));
        if (!call) continue;
        call.status = 'completed';
        call.output = outputText(payload.output);
        call.completedAt = line.time;
        call.isError = (payload.output as { success?: unknown } | undefined)?.success === false;
        call.durationMs = Math.max(0, line.time - call.createdAt);
      }
    }
  }
  // Results are applied once every line is read: a command's or a patch's end event may be
  // written before or after the call's output.
  for (const call of calls.values()) {
    if (call.status !== 'completed') continue;
    const result = commandResults.get(call.callId);
    const exitCode = result ? result.exitCode : exitCodeInOutput(call.output);
    if (result) call.durationMs = result.durationMs;
    if (exitCode !== undefined) call.exitCode = exitCode;
    if ((exitCode !== undefined && exitCode !== null && exitCode !== 0) || patchSucceeded.get(call.callId) === false) call.isError = true;
  }
  const last = lines.at(-1) as Line;
  endTurn(turnIds.size === 0 && items.at(-1)?.kind === 'assistant_message' ? 'completed' : 'interrupted', last.time);
  const firstUser = items.find((item) => item.kind === 'user_message');
  const firstText = firstUser?.kind === 'user_message' && firstUser.content[0]?.type === 'text' ? firstUser.content[0].text.replace(/\s+/g, ' ').trim() : '';
  const title = firstText ? (firstText.length > TITLE_LENGTH ? `${firstText.slice(0, TITLE_LENGTH - 1)}…` : firstText) : `Codex session ${text(meta.payload.id)}`;
  const createdAt = meta.time;
  const updatedAt = last.time;
  const conversation: Conversation = { id: conversationId, title, workLocation: [{ executor: options.executor ?? 'local', cwd }], rootSessionId: sessionId, createdAt, updatedAt };
  const session: Session = { id: sessionId, conversationId, parentSessionId: null, agent: options.agent, model: options.model, status: 'idle', activeTurnId: null, queuedInputs: [], pendingApprovals: [], pendingUserInputs: [], createdAt, updatedAt };
  const metadata: MetadataEntry[] = [{ type: 'conversation', conversation }, { type: 'session', session }, ...[...turns.values()].map((turn): MetadataEntry => ({ type: 'turn', turn }))];
  return {
    conversationId,
    exportedAt: Date.now(),
    source: 'codex',
    streams: [
      { stream: 'metadata', entries: metadata.map((value, index) => ({ seq: index + 1, value })) },
      { stream: sessionId, entries: items.map((value, index) => ({ seq: index + 1, value })) },
    ],
    attachments: [],
  };
}
