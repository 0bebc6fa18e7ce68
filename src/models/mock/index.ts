/**
 * Mock model provider: a local HTTP server that answers OpenAI Chat Completions and Responses
 * requests from a script, for tests and the offline demo.
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
  estimateTokens,
  expandMockScript,
  loadMockScript,
  mockScriptSchema,
  parseMockScript,
  resolveReply,
  splitIntoPieces,
  type MockError,
  type MockResponseEntry,
  type MockScript,
  type MockToolCall,
  type MockUsage,
  type ResolvedReply,
  type ResolvedToolCall,
  type ServerSentEvent,
} from './script.js';
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
