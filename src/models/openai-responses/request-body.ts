/**
 * The body of an OpenAI Responses API request (`POST /v1/responses`, source: OpenAI API
 * reference, "Create a model response") made from the runtime's model messages, for the
 * runtime's own streaming client (`response-stream.ts`).
 *
 * It sends what the AI SDK's OpenAI provider sends for the same messages, so conversations
 * recorded through either read the same to the model: reasoning blocks carry their item id and
 * encrypted content (`store: false`), blocks of one reasoning item are merged into one input
 * item with several summary parts, tool calls and results are `function_call` /
 * `function_call_output` items.
 */
import type { AssistantModelMessage, ModelMessage, ToolModelMessage, UserModelMessage } from 'ai';

/** A tool as the model sees it: name, description and the JSON Schema of its arguments. */
export interface ModelTool {
  name: string;
  description: string;
  /** JSON Schema (draft 2020-12 subset) of the arguments object. */
  parameters: Record<string, unknown>;
}

/** Options of the request besides the messages (the OpenAI part of `reasoningProviderOptions`). */
export interface ResponsesRequestOptions {
  modelId: string;
  system?: string;
  messages: ModelMessage[];
  tools: ModelTool[];
  /** `{reasoningEffort, reasoningSummary, store, include}`; undefined = the model is not asked to reason. */
  openai?: Record<string, unknown>;
}

type InputItem = Record<string, unknown>;

/** Provider data of a reasoning block or tool call, as recorded: `{openai: {itemId, reasoningEncryptedContent}}`. */
function openaiData(providerOptions: unknown): { itemId?: string; reasoningEncryptedContent?: string | null } {
  const openai = (providerOptions as { openai?: Record<string, unknown> } | undefined)?.openai;
  if (!openai) return {};
  return {
    ...(typeof openai.itemId === 'string' ? { itemId: openai.itemId } : {}),
    ...(typeof openai.reasoningEncryptedContent === 'string' ? { reasoningEncryptedContent: openai.reasoningEncryptedContent } : {}),
  };
}

function base64(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

function imageUrl(image: unknown, mediaType: string | undefined): string {
  if (image instanceof URL) return image.href;
  if (image instanceof Uint8Array) return `data:${mediaType ?? 'image/png'};base64,${base64(image)}`;
  if (typeof image === 'string') return /^(https?|data):/.test(image) ? image : `data:${mediaType ?? 'image/png'};base64,${image}`;
  throw new Error('an image part must be a URL, bytes or a base64 string');
}

function userInput(message: UserModelMessage): InputItem {
  if (typeof message.content === 'string') return { role: 'user', content: [{ type: 'input_text', text: message.content }] };
  const content = message.content.map((part) => {
    if (part.type === 'text') return { type: 'input_text', text: part.text };
    if (part.type === 'image') return { type: 'input_image', image_url: imageUrl(part.image, part.mediaType) };
    throw new Error(`a user message part of type "${part.type}" cannot be sent to the Responses API`);
  });
  return { role: 'user', content };
}

function toolOutputText(output: ToolModelMessage['content'][number]): string {
  if (output.type !== 'tool-result') return '';
  const result = output.output;
  switch (result.type) {
    case 'text':
    case 'error-text':
      return result.value;
    case 'json':
    case 'error-json':
      return JSON.stringify(result.value);
    default:
      return JSON.stringify(result);
  }
}

function assistantInput(message: AssistantModelMessage, input: InputItem[]): void {
  if (typeof message.content === 'string') {
    input.push({ role: 'assistant', content: [{ type: 'output_text', text: message.content }] });
    return;
  }
  // Blocks of one reasoning item (one per summary part) go back as one item, as they came.
  const reasoningItems = new Map<string, InputItem & { summary: unknown[] }>();
  for (const part of message.content) {
    switch (part.type) {
      case 'text':
        input.push({ role: 'assistant', content: [{ type: 'output_text', text: part.text }] });
        break;
      case 'tool-call':
        input.push({ type: 'function_call', call_id: part.toolCallId, name: part.toolName, arguments: typeof part.input === 'string' ? part.input : JSON.stringify(part.input ?? {}) });
        break;
      case 'reasoning': {
        const data = openaiData(part.providerOptions);
        const summary = part.text.length > 0 ? [{ type: 'summary_text', text: part.text }] : [];
        const existing = data.itemId !== undefined ? reasoningItems.get(data.itemId) : undefined;
        if (existing) {
          existing.summary.push(...summary);
          if (data.reasoningEncryptedContent) existing.encrypted_content = data.reasoningEncryptedContent;
        } else if (data.itemId !== undefined || data.reasoningEncryptedContent) {
          const item = { type: 'reasoning', ...(data.itemId !== undefined ? { id: data.itemId } : {}), encrypted_content: data.reasoningEncryptedContent ?? null, summary };
          if (data.itemId !== undefined) reasoningItems.set(data.itemId, item);
          input.push(item);
        }
        // Reasoning of another provider (no item id, nothing encrypted) cannot be sent back; it is left out.
        break;
      }
      default:
        break;
    }
  }
}

/**
 * Converts model messages to Responses API input items.
 * @param system the system prompt, sent first as a `developer` message to reasoning models
 *   (which take no `system` role) and as a `system` message to the others
 * @throws Error naming the part when a message holds content the API cannot take
 */
export function responsesInput(system: string | undefined, messages: ModelMessage[], reasoning: boolean): InputItem[] {
  const input: InputItem[] = [];
  if (system) input.push({ role: reasoning ? 'developer' : 'system', content: system });
  for (const message of messages) {
    switch (message.role) {
      case 'system':
        input.push({ role: reasoning ? 'developer' : 'system', content: message.content });
        break;
      case 'user':
        input.push(userInput(message));
        break;
      case 'assistant':
        assistantInput(message, input);
        break;
      case 'tool':
        for (const part of message.content) {
          if (part.type === 'tool-result') input.push({ type: 'function_call_output', call_id: part.toolCallId, output: toolOutputText(part) });
        }
        break;
    }
  }
  return input;
}

/** A tool in the request body (`{type: 'function', …}`), made once per {@link ModelTool} object and frozen. */
const functionTools = new WeakMap<ModelTool, Readonly<Record<string, unknown>>>();

function functionTool(tool: ModelTool): Readonly<Record<string, unknown>> {
  let entry = functionTools.get(tool);
  if (!entry) {
    entry = Object.freeze({ type: 'function', name: tool.name, description: tool.description, parameters: tool.parameters, strict: false });
    functionTools.set(tool, entry);
  }
  return entry;
}

/** UTF-8 JSON of each tool entry of {@link functionTools}, encoded at its first request. */
const encodedTools = new WeakMap<object, Buffer>();
const COMMA = Buffer.from(',');
const CLOSING = Buffer.from(']}');

/**
 * The body as UTF-8 JSON, ready to send. The tools are the same objects at every step of a turn
 * (about 24 KB of JSON Schema and descriptions for the built-in tools, most of a request), so
 * each tool entry is serialized and encoded once and copied into later bodies; the rest is
 * serialized each time. `tools` comes last in the text; the JSON is otherwise what
 * `JSON.stringify(body)` gives.
 * @param body a body from {@link responsesRequestBody}
 */
export function encodeRequestBody(body: Record<string, unknown>): Buffer {
  const { tools, ...rest } = body;
  if (!Array.isArray(tools) || tools.length === 0) return Buffer.from(JSON.stringify(body));
  const head = JSON.stringify(rest);
  const parts: Buffer[] = [Buffer.from(`${head.slice(0, -1)}${head.length > 2 ? ',' : ''}"tools":[`)];
  tools.forEach((tool: unknown, index) => {
    if (index > 0) parts.push(COMMA);
    // Entries this module did not make (tests, callers building bodies by hand) are serialized each time.
    if (typeof tool !== 'object' || tool === null || !Object.isFrozen(tool)) return void parts.push(Buffer.from(JSON.stringify(tool)));
    let encoded = encodedTools.get(tool);
    if (!encoded) {
      encoded = Buffer.from(JSON.stringify(tool));
      encodedTools.set(tool, encoded);
    }
    parts.push(encoded);
  });
  parts.push(CLOSING);
  return Buffer.concat(parts);
}

/**
 * The whole streaming request body.
 * @returns the JSON object to POST to `<baseURL>/responses` (send it with {@link encodeRequestBody})
 */
export function responsesRequestBody(options: ResponsesRequestOptions): Record<string, unknown> {
  const openai = options.openai ?? {};
  const effort = openai.reasoningEffort as string | undefined;
  const reasoning = effort !== undefined && effort !== 'none';
  return {
    model: options.modelId,
    input: responsesInput(options.system, options.messages, reasoning),
    ...(options.tools.length > 0 ? { tools: options.tools.map(functionTool) } : {}),
    ...(effort !== undefined ? { reasoning: { effort, ...(typeof openai.reasoningSummary === 'string' ? { summary: openai.reasoningSummary } : {}) } } : {}),
    ...(typeof openai.store === 'boolean' ? { store: openai.store } : {}),
    ...(Array.isArray(openai.include) ? { include: openai.include } : {}),
    stream: true,
  };
}
