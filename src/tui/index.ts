/**
 * `openvaala` (no arguments) and `openvaala tui [--resume ID|last]`: the terminal UI. Finds
 * or starts the local runtime server as `exec` does, opens a new conversation in the working
 * directory (created by the first prompt) or resumes one, and draws the UI with Ink on the
 * terminal's alternate screen. Leaving unsubscribes only: a running turn goes on, and
 * reattaching shows it live. Imported only by these commands, so others never load Ink.
 */
import path from 'node:path';
import { RuntimeClient } from '../client/runtime-client.js';
import { resolvePaths } from '../config/paths.js';
import { resolveConversationId } from '../cli/conversation-reference.js';
import { ensureServer } from '../cli/server-discovery.js';
import { UsageError } from '../cli/usage-error.js';
import { renderApp } from './app.js';
import { ConversationController } from './conversation-controller.js';
import { TuiScreen } from './screen.js';
import { colorDisabled } from './styled-text.js';
import { resumeCommand, serverDirectories } from '../client/resume-command.js';

/** Options of `openvaala tui`. */
export interface TuiOptions {
  cwd: string;
  /** A conversation id, or `last`. */
  resume?: string;
  model?: string;
  agent?: string;
  executor?: string;
  dataDir?: string;
  configDir?: string;
}

/** Client name the TUI gives in `initialize` (shown as `decidedBy: client:openvaala-tui`). */
export const TUI_CLIENT_NAME = 'openvaala-tui';

/**
 * Runs the terminal UI until the user leaves.
 * @returns the exit code (0)
 * @throws UsageError when stdin or stdout is not a terminal, or the conversation to resume does not exist
 */
export async function runTui(options: TuiOptions, streams: { stdin: NodeJS.ReadStream; stdout: NodeJS.WriteStream; stderr: NodeJS.WriteStream } = { stdin: process.stdin, stdout: process.stdout, stderr: process.stderr }): Promise<number> {
  if (!streams.stdin.isTTY || !streams.stdout.isTTY) throw new UsageError('the terminal UI needs a terminal; for scripts use: openvaala exec "…"');
  const paths = resolvePaths({ ...(options.configDir ? { configDir: options.configDir } : {}), ...(options.dataDir ? { dataDir: options.dataDir } : {}) });
  const server = await ensureServer(paths, { requireConfigDir: options.configDir !== undefined });
  // Approvals and questions are answered with approval/respond and input/respond from the
  // notifications every subscriber gets, so the server never waits on this connection.
  const client = await RuntimeClient.connect({ url: server.url, token: server.token, clientName: TUI_CLIENT_NAME, capabilities: { approvals: false, userInput: false, deltas: true, fs: true } });
  const controller = new ConversationController(client, {
    cwd: path.resolve(options.cwd),
    ...(options.model ? { model: options.model } : {}),
    ...(options.agent ? { agent: options.agent } : {}),
    ...(options.executor ? { executor: options.executor } : {}),
  });
  try {
    // Only for display: a server that cannot say keeps the UI usable.
    await controller.loadDefaults().catch(() => undefined);
    if (options.resume) await controller.open(await resolveConversationId(client, options.resume));
    const screen = new TuiScreen(controller, client, !colorDisabled());
    let lost: Error | undefined;
    const stdout = streams.stdout;
    stdout.write('\u001b[?1049h\u001b[?2004h');
    const instance = renderApp(screen, streams);
    client.onClose((error) => {
      lost = error;
      instance.unmount();
    });
    try {
      await instance.waitUntilExit();
    } finally {
      stdout.write('\u001b[?2004l\u001b[?1049l');
    }
    const id = controller.conversationId;
    if (lost) streams.stderr.write(`openvaala: the connection to the server was lost (${lost.message})\n`);
    if (id) streams.stderr.write(`conversation ${id}${controller.model.running ? ' (its turn goes on on the server)' : ''}; continue with: ${resumeCommand('tui', id, serverDirectories(server, paths))}\n`);
    return lost ? 1 : 0;
  } finally {
    controller.dispose();
    await controller.leave();
    await client.close();
  }
}
