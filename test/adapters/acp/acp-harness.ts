/**
 * Drives `openvaala acp` as a real child process, as an editor does: an ACP client app of the
 * SDK over the child's stdin/stdout, with a tap that checks every message on the wire, in both
 * directions, against the JSON Schema shipped with the SDK package.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { Readable, Writable } from 'node:stream';
import * as acp from '@agentclientprotocol/sdk';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { CLI_EXECUTABLE } from '../../../src/package-info.js';
import type { TestEnvironment } from '../../helpers/environment.js';

const require = createRequire(import.meta.url);
const schema = require('@agentclientprotocol/sdk/schema/v1/schema.json') as Record<string, unknown>;

/** Per method, the schema definitions of its params and of its result (none for notifications). */
const DEFINITIONS: Record<string, [string, string | undefined]> = {
  initialize: ['InitializeRequest', 'InitializeResponse'],
  'session/new': ['NewSessionRequest', 'NewSessionResponse'],
  'session/load': ['LoadSessionRequest', 'LoadSessionResponse'],
  'session/resume': ['ResumeSessionRequest', 'ResumeSessionResponse'],
  'session/list': ['ListSessionsRequest', 'ListSessionsResponse'],
  'session/prompt': ['PromptRequest', 'PromptResponse'],
  'session/set_mode': ['SetSessionModeRequest', 'SetSessionModeResponse'],
  'session/set_config_option': ['SetSessionConfigOptionRequest', 'SetSessionConfigOptionResponse'],
  'session/cancel': ['CancelNotification', undefined],
  'session/update': ['SessionNotification', undefined],
  'session/request_permission': ['RequestPermissionRequest', 'RequestPermissionResponse'],
  'fs/read_text_file': ['ReadTextFileRequest', 'ReadTextFileResponse'],
  'fs/write_text_file': ['WriteTextFileRequest', 'WriteTextFileResponse'],
  'terminal/create': ['CreateTerminalRequest', 'CreateTerminalResponse'],
  'terminal/output': ['TerminalOutputRequest', 'TerminalOutputResponse'],
  'terminal/wait_for_exit': ['WaitForTerminalExitRequest', 'WaitForTerminalExitResponse'],
  'terminal/kill': ['KillTerminalRequest', 'KillTerminalResponse'],
  'terminal/release': ['ReleaseTerminalRequest', 'ReleaseTerminalResponse'],
};

/** One message seen on the wire. */
export interface TappedMessage {
  from: 'editor' | 'agent';
  message: Record<string, unknown>;
}

/**
 * Checks messages against the ACP v1 schema: each against the whole protocol, and requests,
 * notifications and responses against the definition of their method (responses found by id).
 */
export class SchemaTap {
  readonly messages: TappedMessage[] = [];
  readonly problems: string[] = [];
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true });
  private readonly whole: ValidateFunction;
  private readonly methodsById = new Map<string, string>();

  constructor() {
    // The numeric formats the schema uses (Rust integer types), checked rather than ignored.
    const integer = (minimum: number, maximum: number) => ({ type: 'number' as const, validate: (value: number) => Number.isInteger(value) && value >= minimum && value <= maximum });
    this.ajv.addFormat('uint16', integer(0, 65_535));
    this.ajv.addFormat('uint32', integer(0, 4_294_967_295));
    this.ajv.addFormat('uint64', integer(0, Number.MAX_SAFE_INTEGER));
    this.ajv.addFormat('int64', integer(Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER));
    this.ajv.addFormat('int32', integer(-2_147_483_648, 2_147_483_647));
    this.ajv.addFormat('uri', { type: 'string', validate: (value: string) => URL.canParse(value) });
    this.ajv.addFormat('double', { type: 'number', validate: (value: number) => Number.isFinite(value) });
    this.ajv.addSchema(schema, 'acp');
    this.whole = this.ajv.compile({ $ref: 'acp#' });
  }

  /** Records and checks one message. */
  see(from: 'editor' | 'agent', message: Record<string, unknown>): void {
    this.messages.push({ from, message });
    const where = `${from} ${JSON.stringify(message).slice(0, 300)}`;
    if (!this.whole(message)) this.problems.push(`${where}: not an ACP message: ${this.ajv.errorsText(this.whole.errors)}`);
    const method = typeof message.method === 'string' ? message.method : undefined;
    const key = `${from === 'editor' ? 'agent' : 'editor'}:${String(message.id)}`;
    if (method !== undefined) {
      const definitions = DEFINITIONS[method];
      if (!definitions) {
        this.problems.push(`${where}: method ${method} is not one this test knows`);
        return;
      }
      if (message.id !== undefined) this.methodsById.set(`${from}:${String(message.id)}`, method);
      this.check(definitions[0], message.params, where);
      return;
    }
    const answered = this.methodsById.get(key);
    if (answered === undefined) {
      this.problems.push(`${where}: a response to no known request`);
      return;
    }
    if ('error' in message) this.check('Error', message.error, where);
    else this.check(DEFINITIONS[answered]?.[1] ?? 'none', message.result, where);
  }

  private check(definition: string, value: unknown, where: string): void {
    const validate = this.ajv.getSchema(`acp#/$defs/${definition}`);
    if (!validate) {
      this.problems.push(`${where}: no definition ${definition}`);
      return;
    }
    if (!validate(value)) this.problems.push(`${where}: not a valid ${definition}: ${this.ajv.errorsText(validate.errors)}`);
  }
}

/** A running `openvaala acp` and the editor connection to it. */
export interface AcpProcess {
  child: ChildProcess;
  agent: acp.ClientConnection['agent'];
  connection: acp.ClientConnection;
  tap: SchemaTap;
  /** Every `session/update` received, in order. */
  updates: acp.SessionNotification[];
  stderr(): string;
  /** Closes the editor side and waits for the process to exit; returns its exit code. */
  stop(): Promise<number | null>;
}

/** What the editor does when the agent asks. */
export interface EditorHandlers {
  requestPermission?: (params: acp.RequestPermissionRequest) => Promise<acp.RequestPermissionResponse>;
  readTextFile?: (params: acp.ReadTextFileRequest) => Promise<acp.ReadTextFileResponse>;
  writeTextFile?: (params: acp.WriteTextFileRequest) => Promise<acp.WriteTextFileResponse>;
  /** The editor's terminals (`terminal/*`), when it offers them. */
  terminals?: {
    create: (params: acp.CreateTerminalRequest) => Promise<acp.CreateTerminalResponse>;
    output: (params: acp.TerminalOutputRequest) => Promise<acp.TerminalOutputResponse>;
    waitForExit: (params: acp.WaitForTerminalExitRequest) => Promise<acp.WaitForTerminalExitResponse>;
    kill: (params: acp.KillTerminalRequest) => Promise<acp.KillTerminalResponse>;
    release: (params: acp.ReleaseTerminalRequest) => Promise<acp.ReleaseTerminalResponse>;
  };
}

/** Starts `node bin/openvaala acp` in the environment and connects an ACP client app to it. */
export function startAcp(environment: TestEnvironment, handlers: EditorHandlers = {}): AcpProcess {
  const child = spawn(process.execPath, [CLI_EXECUTABLE, 'acp'], { env: environment.env, cwd: environment.workDir, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const tap = new SchemaTap();
  const wire = acp.ndJsonStream(Writable.toWeb(child.stdin as Writable) as WritableStream<Uint8Array>, Readable.toWeb(child.stdout as Readable) as ReadableStream<Uint8Array>);
  const readable = wire.readable.pipeThrough(
    new TransformStream<acp.AnyMessage, acp.AnyMessage>({
      transform(message, controller) {
        tap.see('agent', message as unknown as Record<string, unknown>);
        controller.enqueue(message);
      },
    }),
  );
  const outgoing = new TransformStream<acp.AnyMessage, acp.AnyMessage>({
    transform(message, controller) {
      tap.see('editor', message as unknown as Record<string, unknown>);
      controller.enqueue(message);
    },
  });
  void outgoing.readable.pipeTo(wire.writable).catch(() => undefined);
  const updates: acp.SessionNotification[] = [];
  const app = acp.client({ name: 'test-editor' }).onNotification('session/update', ({ params }) => {
    updates.push(params);
  });
  if (handlers.requestPermission) app.onRequest('session/request_permission', ({ params }) => handlers.requestPermission!(params));
  if (handlers.readTextFile) app.onRequest('fs/read_text_file', ({ params }) => handlers.readTextFile!(params));
  if (handlers.writeTextFile) app.onRequest('fs/write_text_file', ({ params }) => handlers.writeTextFile!(params));
  const terminals = handlers.terminals;
  if (terminals) {
    app.onRequest('terminal/create', ({ params }) => terminals.create(params));
    app.onRequest('terminal/output', ({ params }) => terminals.output(params));
    app.onRequest('terminal/wait_for_exit', ({ params }) => terminals.waitForExit(params));
    app.onRequest('terminal/kill', ({ params }) => terminals.kill(params));
    app.onRequest('terminal/release', ({ params }) => terminals.release(params));
  }
  const connection = app.connect({ writable: outgoing.writable, readable });
  return {
    child,
    agent: connection.agent,
    connection,
    tap,
    updates,
    stderr: () => stderr,
    async stop() {
      connection.close();
      child.stdin?.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

/** The client capabilities of an editor that serves files and offers terminals (as Zed does) or not. */
export function editorCapabilities(files: boolean, terminal = false): acp.ClientCapabilities {
  return { fs: { readTextFile: files, writeTextFile: files }, terminal };
}

/** The text of the chunks of one kind, joined. */
export function chunkText(updates: acp.SessionNotification[], kind: 'agent_message_chunk' | 'user_message_chunk' | 'agent_thought_chunk'): string {
  return updates
    .map((notification) => notification.update)
    .filter((update): update is Extract<acp.SessionUpdate, { sessionUpdate: typeof kind }> => update.sessionUpdate === kind)
    .map((update) => (update.content.type === 'text' ? update.content.text : ''))
    .join('');
}
