/**
 * Converts an MCP tool result (MCP specification 2025-06-18, Tools: `CallToolResult` with
 * `content` blocks, optional `structuredContent` and `isError`) into the runtime's
 * `ToolResult`: the text the model reads, plus structured data kept for clients.
 */
import type { ContentBlock } from '@modelcontextprotocol/sdk/types.js';
import type { ToolResult } from '../tools/tool.js';

/** An image or audio clip a tool returned, kept as the server sent it. */
export interface McpMediaContent {
  /** MIME type (`image/png`, `audio/wav`…). */
  mediaType: string;
  /** Base64-encoded bytes. */
  data: string;
}

/** What `tools/call` answered, as far as the conversion needs it. */
export interface McpCallResult {
  content?: ContentBlock[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  /** The pre-2024-11-05 result shape, still accepted by the SDK. */
  toolResult?: unknown;
}

/** Size in bytes of base64 data (without decoding it). */
export function base64Bytes(data: string): number {
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}

/**
 * Builds the tool result the model and clients see.
 *
 * - `text` blocks are joined with newlines;
 * - `image` and `audio` blocks become a placeholder line in `output` (`[image image/png,
 *   1234 bytes]`) and are kept in `structured.images` / `structured.audio` as
 *   `{ mediaType, data }` (the model request carries only the text);
 * - `resource_link` blocks become `[resource link: <name> <uri>]`; embedded `resource` blocks
 *   contribute their text, or a placeholder for binary contents;
 * - `structuredContent` is kept as `structured.structuredContent` and, when no block carried
 *   text, shown to the model as JSON;
 * - `isError` is the server's.
 */
export function toToolResult(result: McpCallResult): ToolResult {
  if (result.content === undefined && result.toolResult !== undefined) {
    return { output: JSON.stringify(result.toolResult), isError: result.isError === true };
  }
  const lines: string[] = [];
  const images: McpMediaContent[] = [];
  const audio: McpMediaContent[] = [];
  let textSeen = false;
  for (const block of result.content ?? []) {
    switch (block.type) {
      case 'text':
        lines.push(block.text);
        textSeen = true;
        break;
      case 'image':
        images.push({ mediaType: block.mimeType, data: block.data });
        lines.push(`[image ${block.mimeType}, ${base64Bytes(block.data)} bytes]`);
        break;
      case 'audio':
        audio.push({ mediaType: block.mimeType, data: block.data });
        lines.push(`[audio ${block.mimeType}, ${base64Bytes(block.data)} bytes]`);
        break;
      case 'resource_link':
        lines.push(`[resource link: ${block.name} ${block.uri}]`);
        break;
      case 'resource': {
        const resource = block.resource;
        if ('text' in resource && typeof resource.text === 'string') {
          lines.push(`[resource ${resource.uri}]\n${resource.text}`);
          textSeen = true;
        } else {
          const blob = 'blob' in resource && typeof resource.blob === 'string' ? resource.blob : '';
          lines.push(`[resource ${resource.uri}${resource.mimeType ? ` ${resource.mimeType}` : ''}, ${base64Bytes(blob)} bytes]`);
        }
        break;
      }
      default:
        // A block type from a newer protocol revision: say so rather than drop it silently.
        lines.push(`[${(block as { type: string }).type} content]`);
    }
  }
  if (!textSeen && result.structuredContent !== undefined) lines.unshift(JSON.stringify(result.structuredContent));
  const structured: Record<string, unknown> = {
    ...(result.structuredContent !== undefined ? { structuredContent: result.structuredContent } : {}),
    ...(images.length > 0 ? { images } : {}),
    ...(audio.length > 0 ? { audio } : {}),
  };
  return {
    output: lines.join('\n'),
    isError: result.isError === true,
    ...(Object.keys(structured).length > 0 ? { structured } : {}),
  };
}
