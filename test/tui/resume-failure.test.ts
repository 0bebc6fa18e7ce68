/**
 * `/resume <id>` in the terminal UI with an id that cannot be opened (a typo, a conversation
 * since deleted) must leave the open conversation as it was: still shown, still subscribed, so
 * its streaming work keeps arriving. Only a conversation that opens replaces it. Against a real
 * in-process server.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { RuntimeClient } from '../../src/client/runtime-client.js';
import { ConversationController } from '../../src/tui/conversation-controller.js';
import { runCommand } from '../../src/tui/screen-commands.js';
import { TuiScreen } from '../../src/tui/screen.js';
import { startInProcessServer, type InProcessServer } from '../helpers/in-process-server.js';

describe('terminal UI: opening a conversation that cannot be opened', () => {
  let harness: InProcessServer | undefined;
  let terminal: RuntimeClient | undefined;
  afterEach(async () => {
    await terminal?.close();
    await harness?.stop();
    harness = terminal = undefined;
  });

  it('keeps the open conversation shown and subscribed, and replaces it only with one that opens', async () => {
    harness = await startInProcessServer('responses:\n  - text: "FIRST-ANSWER"\n  - text: "SECOND-ANSWER"\n  - text: "OTHER-ANSWER"\n');
    const kept = await harness.conversation();
    const other = await harness.conversation();
    terminal = await RuntimeClient.connect({ url: harness.server.url, token: harness.server.token, clientName: 'tui' });
    const controller = new ConversationController(terminal, { cwd: harness.environment.workDir });
    await controller.open(kept);
    await controller.send('first', 'queue');
    await expect.poll(() => JSON.stringify(controller.model.entries), { timeout: 20_000 }).toContain('FIRST-ANSWER');

    await expect(controller.open('conv_00000000000000000000000000')).rejects.toThrow(/conv_00000000000000000000000000/);
    expect(controller.conversationId).toBe(kept);
    expect(JSON.stringify(controller.model.entries)).toContain('FIRST-ANSWER');

    // `/resume` takes what `--resume` takes; a reference that fits nothing is told, and changes nothing.
    const screen = new TuiScreen(controller, terminal, false);
    screen.size = { columns: 120, rows: 40 };
    for (const bad of ['not-an-id', 'conv_zzzzzzzzzzzzzzzzzzzzzzzzzz']) {
      runCommand(screen, `/resume ${bad}`);
      await expect.poll(() => screen.frame().join('\n'), { timeout: 10_000 }).toContain(`there is no conversation "${bad}"`);
      expect(controller.conversationId).toBe(kept);
    }

    // Still subscribed: a turn started by another client streams into the kept conversation.
    const root = (await harness.client.request('conversation/get', { conversationId: kept })).conversation.rootSessionId;
    await harness.client.request('session/input', { conversationId: kept, sessionId: root, input: [{ type: 'text', text: 'second' }] });
    await expect.poll(() => JSON.stringify(controller.model.entries), { timeout: 20_000 }).toContain('SECOND-ANSWER');

    // A conversation that opens replaces it (here by a prefix of its id), and the one left is no longer followed.
    runCommand(screen, `/resume ${other.slice(0, -3)}`);
    await expect.poll(() => controller.conversationId, { timeout: 10_000 }).toBe(other);
    expect(JSON.stringify(controller.model.entries)).not.toContain('FIRST-ANSWER');
    const seenAfterSwitch: string[] = [];
    terminal.onNotification((event) => {
      if ((event.params as { conversationId?: string }).conversationId === kept) seenAfterSwitch.push(event.method);
    });
    const completedBefore = harness.events.filter((event) => event.method === 'turn/completed').length;
    await harness.client.request('session/input', { conversationId: kept, sessionId: root, input: [{ type: 'text', text: 'third' }] });
    await harness.waitFor(() => harness!.events.filter((event) => event.method === 'turn/completed').length > completedBefore);
    expect(seenAfterSwitch).toEqual([]);
  });
});
