/**
 * Mock model provider: a local HTTP server that answers OpenAI Chat Completions, OpenAI
 * Responses, Anthropic Messages and Gemini `generateContent` requests from a script, for tests
 * and the offline demo.
 */
export {
  MockProviderServer,
  MOCK_MODEL_ID,
  formatServerSentEvent,
  type MockProviderAddress,
  type MockProviderStartOptions,
  type RecordedModelRequest,
} from './mock-provider-server.js';
export {
  MockScriptError,
  argumentsAsObject,
  estimateTokens,
  expandMockScript,
  generatedTextDeltas,
  loadMockScript,
  mockScriptSchema,
  parseMockScript,
  resolveReply,
  splitIntoPieces,
  type MockError,
  type MockHold,
  type MockResponseEntry,
  type MockScript,
  type MockToolCall,
  type MockUsage,
  type ResolvedReply,
  type ResolvedToolCall,
  type ServerSentEvent,
} from './script.js';
export {
  encodeError,
  encodeReply,
  matchModelRoute,
  type EncodedError,
  type EncodedReply,
  type ModelApi,
  type ModelRoute,
} from './routes.js';
export { openAIErrorBody, type OpenAIErrorBody } from './openai-error.js';
export {
  encodeChatCompletion,
  encodeChatCompletionStream,
  toChatCompletionUsage,
  type ChatCompletion,
  type ChatCompletionChunk,
  type ChatCompletionContext,
  type ChatCompletionUsage,
} from './chat-completions-stream.js';
export {
  encodeResponse,
  encodeResponsesStream,
  toResponsesUsage,
  type ResponsesContext,
  type ResponsesOutputItem,
  type ResponsesResponse,
  type ResponsesUsage,
} from './responses-stream.js';
export {
  anthropicErrorBody,
  encodeAnthropicMessage,
  encodeAnthropicStream,
  toAnthropicUsage,
  type AnthropicContentBlock,
  type AnthropicContext,
  type AnthropicErrorBody,
  type AnthropicMessage,
  type AnthropicUsage,
} from './anthropic-stream.js';
export {
  encodeGoogleResponse,
  encodeGoogleStream,
  googleErrorBody,
  toGoogleUsageMetadata,
  type GoogleContext,
  type GoogleErrorBody,
  type GoogleGenerateContentResponse,
  type GooglePart,
  type GoogleUsageMetadata,
} from './google-stream.js';
