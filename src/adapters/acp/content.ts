/**
 * Prompt content between the Agent Client Protocol and OpenVaala: ACP content blocks
 * (https://agentclientprotocol.com/protocol/v1/content) become the content parts of
 * `session/input`, and the parts of stored user messages become content blocks again when a
 * session is loaded.
 */
import { fileURLToPath, pathToFileURL } from 'node:url';
import type * as acp from '@agentclientprotocol/sdk';
import type { ContentPart } from '../../protocol/index.js';

/** A prompt holding a block the adapter cannot pass on; the message names the block. */
export class UnsupportedContentError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnsupportedContentError';
  }
}

/** The local path of a `file://` URI, or undefined for any other URI. */
function filePath(uri: string): string | undefined {
  if (!uri.startsWith('file://')) return undefined;
  try {
    return fileURLToPath(uri);
  } catch {
    return undefined;
  }
}

/**
 * One ACP content block as OpenVaala content parts. Text stays text; an image becomes a data
 * URL; a link to a local file becomes a `file` part (the model is told the path and reads it
 * with its tools), another link a line naming it; an embedded text resource (a file the editor
 * attached, possibly unsaved) becomes text headed by its URI; an embedded image a data URL.
 * @param index the block's place in the prompt, for error messages
 * @throws UnsupportedContentError for audio and for embedded binary data that is not an image
 */
export function promptPart(block: acp.ContentBlock, index: number): ContentPart {
  switch (block.type) {
    case 'text':
      return { type: 'text', text: block.text };
    case 'image':
      return { type: 'image', url: `data:${block.mimeType};base64,${block.data}`, mediaType: block.mimeType };
    case 'resource_link': {
      const local = filePath(block.uri);
      if (local !== undefined) return { type: 'file', path: local, name: block.name, ...(block.mimeType ? { mediaType: block.mimeType } : {}) };
      return { type: 'text', text: `[linked resource ${block.name}: ${block.uri}]` };
    }
    case 'resource': {
      const resource = block.resource;
      if ('text' in resource) {
        const shown = filePath(resource.uri) ?? resource.uri;
        return { type: 'text', text: `[contents of ${shown}]\n${resource.text}` };
      }
      if (resource.mimeType?.startsWith('image/')) return { type: 'image', url: `data:${resource.mimeType};base64,${resource.blob}`, mediaType: resource.mimeType };
      throw new UnsupportedContentError(`prompt[${index}]: embedded resource ${resource.uri} is binary data of type ${resource.mimeType ?? 'unknown'}; only text and images can be sent`);
    }
    case 'audio':
      throw new UnsupportedContentError(`prompt[${index}]: audio content is not supported (the agent does not advertise promptCapabilities.audio)`);
    default:
      throw new UnsupportedContentError(`prompt[${index}]: unknown content block type "${(block as { type: string }).type}"`);
  }
}

/**
 * A whole ACP prompt as `session/input` content parts.
 * @throws UnsupportedContentError for an empty prompt or a block that cannot be sent
 */
export function promptParts(prompt: acp.ContentBlock[]): ContentPart[] {
  if (prompt.length === 0) throw new UnsupportedContentError('prompt: empty; give at least one content block');
  return prompt.map((block, index) => promptPart(block, index));
}

/** A stored user message part as an ACP content block (for `session/load`). */
export function contentBlock(part: ContentPart): acp.ContentBlock {
  switch (part.type) {
    case 'text':
      return { type: 'text', text: part.text };
    case 'image': {
      const match = /^data:([^;,]+);base64,(.*)$/s.exec(part.url);
      if (match) return { type: 'image', mimeType: match[1] as string, data: match[2] as string };
      return { type: 'resource_link', name: part.url, uri: part.url, ...(part.mediaType ? { mimeType: part.mediaType } : {}) };
    }
    case 'file':
      return { type: 'resource_link', name: part.name ?? part.path, uri: pathToFileURL(part.path).href, ...(part.mediaType ? { mimeType: part.mediaType } : {}) };
  }
}
