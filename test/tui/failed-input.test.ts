/**
 * What the terminal UI does with typed text whose sending fails: a prompt refused by
 * `conversation/create` or `session/input`, a refused steer, a `/command` that fails (a model
 * the server refuses, an unknown command) comes back to the composer with the error shown, so
 * it can be corrected and sent again; what was typed meanwhile is kept and the failed text is
 * in the history (↑). Driven through the screen state with a scripted protocol client, and
 * the reported case in a real pseudo-terminal (tmux) against a real server: a first run
 * without `providers.yaml`.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { RuntimeClient } from '../../src/client/runtime-client.js';
import type { AnyNotification, Conversation, Session } from '../../src/protocol/index.js';
import { ConversationController } from '../../src/tui/conversation-controller.js';
import { TuiScreen } from '../../src/tui/screen.js';
import { CLI_EXECUTABLE } from '../../src/package-info.js';
import { startInProcessServer, type InProcessServer } from '../helpers/in-process-server.js';
import { TmuxTerminal } from '../helpers/tmux.js';

const CONV = 'conv_1';
const ROOT = 'sess_root';
const NO_PROVIDERS = 'providers.yaml does not exist in /home/u/.config/openvaala: create it with a provider and a default model';

const conversation = (): Conversation => ({ id: CONV, title: 't', workLocation: [{ executor: 'local', cwd: '/w' }], rootSessionId: ROOT, createdAt: 0, updatedAt: 0 }) as Conversation;
const session = (activeTurnId: string | null): Session => ({ id: ROOT, parentSessionId: null, status: activeTurnId ? 'running' : 'idle', queuedInputs: [], pendingApprovals: [], pendingUserInputs: [], activeTurnId }) as unknown as Session;

/**
 * A client whose requests succeed unless `refusals` holds their method: then they fail with
 * that message, at once or (`hold`) when the test releases them.
 */
function scriptedClient(options: { running?: boolean } = {}) {
  const refusals = new Map<string, string>();
  const held: (() => void)[] = [];
  let hold = false;
  const sent: { method: string; params: Record<string, unknown> }[] = [];
  const client = {
    onNotification(_listener: (event: AnyNotification) => void) {
      return () => undefined;
    },
    async request(method: string, params: Record<string, unknown>): Promise<unknown> {
      sent.push({ method, params });
      const refusal = refusals.get(method);
      if (refusal !== undefined) {
        if (hold) await new Promise<void>((resolve) => held.push(resolve));
        throw new Error(refusal);
      }
      switch (method) {
        case 'conversation/create':
          return { conversation: conversation() };
        case 'conversation/subscribe':
          return { conversation: conversation(), sessions: [session(options.running ? 'turn_1' : null)], turns: [], heads: { [ROOT]: 0 } };
        case 'items/list':
          return { items: [] };
        case 'session/input':
          return { queued: false };
        default:
          return {};
      }
    },
  };
  return {
    client: client as unknown as RuntimeClient,
    refusals,
    sent,
    holdRefusals: () => (hold = true),
    releaseRefusals: () => held.splice(0).forEach((release) => release()),
  };
}

function openScreen(options: { running?: boolean } = {}) {
  const scripted = scriptedClient(options);
  const controller = new ConversationController(scripted.client, { cwd: '/w' });
  const screen = new TuiScreen(controller, scripted.client, false);
  screen.size = { columns: 100, rows: 30 };
  return { screen, controller, ...scripted };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 10));
const shown = (screen: TuiScreen) => screen.frame().join('\n');
const enter = (screen: TuiScreen) => screen.handleInput('', { return: true } as never);
const ctrl = (screen: TuiScreen, letter: string) => screen.handleInput(letter, { ctrl: true } as never);
const up = (screen: TuiScreen) => screen.handleInput('', { upArrow: true } as never);
const type = (screen: TuiScreen, text: string) => {
  for (const character of text) screen.handleInput(character, {} as never);
};
const inputs = (sent: { method: string; params: Record<string, unknown> }[]) => sent.filter((request) => request.method === 'session/input').map((request) => request.params.input);

describe('terminal UI: typed text whose sending fails comes back', () => {
  it('keeps a first prompt refused by conversation/create in the composer; Enter sends it once the cause is fixed', async () => {
    const { screen, refusals, sent } = openScreen();
    refusals.set('conversation/create', NO_PROVIDERS);
    type(screen, 'explain this repository');
    enter(screen);
    expect(screen.composer.text).toBe('');
    await settle();

    expect(shown(screen)).toContain('providers.yaml does not exist');
    expect(screen.composer.text).toBe('explain this repository');
    expect(screen.composer.cursor).toBe('explain this repository'.length);

    refusals.clear();
    enter(screen);
    await settle();
    expect(inputs(sent)).toEqual(['explain this repository']);
    expect(sent.find((request) => request.method === 'conversation/create')?.params.title).toBe('explain this repository');
    expect(screen.composer.text).toBe('');
  });

  it('keeps a prompt refused by session/input; the history recalls it, once however often it failed', async () => {
    const { screen, controller, refusals } = openScreen();
    await controller.open(CONV);
    type(screen, 'earlier prompt');
    enter(screen);
    await settle();
    refusals.set('session/input', 'the session is closed');
    type(screen, 'run the tests');
    enter(screen);
    await settle();
    expect(shown(screen)).toContain('the session is closed');
    expect(screen.composer.text).toBe('run the tests');
    enter(screen);
    await settle();
    expect(screen.composer.text).toBe('run the tests');

    ctrl(screen, 'u');
    up(screen);
    expect(screen.composer.text).toBe('run the tests');
    up(screen);
    expect(screen.composer.text).toBe('earlier prompt');
  });

  it('keeps a refused steer in the composer', async () => {
    const { screen, controller, refusals, sent } = openScreen({ running: true });
    await controller.open(CONV);
    refusals.set('session/input', 'turn turn_1 is no longer running');
    type(screen, 'use the other file');
    ctrl(screen, 's');
    await settle();
    expect(sent.find((request) => request.method === 'session/input')?.params.mode).toBe('steer');
    expect(shown(screen)).toContain('turn turn_1 is no longer running');
    expect(screen.composer.text).toBe('use the other file');
  });

  it('keeps a large paste behind its placeholder and sends it whole again', async () => {
    const { screen, refusals, sent } = openScreen();
    const pasted = Array.from({ length: 20 }, (_, index) => `line ${index}`).join('\n');
    refusals.set('conversation/create', NO_PROVIDERS);
    type(screen, 'see ');
    screen.composer.insert(pasted);
    enter(screen);
    await settle();
    expect(screen.composer.text).toBe(`see [pasted text #1: 20 lines, ${pasted.length} characters]`);
    refusals.clear();
    enter(screen);
    await settle();
    expect(inputs(sent)).toEqual([`see ${pasted}`]);
  });

  it('keeps a /model the server refuses, and an unknown command, in the composer', async () => {
    const { screen, controller, refusals } = openScreen();
    await controller.open(CONV);
    refusals.set('session/setModel', 'unknown model nope/nothing');
    type(screen, '/model nope/nothing');
    enter(screen);
    await settle();
    expect(shown(screen)).toContain('unknown model nope/nothing');
    expect(screen.composer.text).toBe('/model nope/nothing');

    ctrl(screen, 'u');
    type(screen, '/modle mock/x');
    enter(screen);
    await settle();
    expect(shown(screen)).toContain('unknown command /modle');
    expect(screen.composer.text).toBe('/modle mock/x');
  });

  it('empties the composer for a command that succeeds', async () => {
    const { screen, controller } = openScreen();
    await controller.open(CONV);
    type(screen, '/model mock/other');
    enter(screen);
    await settle();
    expect(shown(screen)).toContain('model: mock/other');
    expect(screen.composer.text).toBe('');
  });

  it('keeps what was typed while the request was pending, and the failed prompt is in the history', async () => {
    const { screen, refusals, holdRefusals, releaseRefusals } = openScreen();
    refusals.set('conversation/create', NO_PROVIDERS);
    holdRefusals();
    type(screen, 'first try');
    enter(screen);
    type(screen, 'something else');
    releaseRefusals();
    await settle();

    expect(screen.composer.text).toBe('something else');
    expect(shown(screen)).toMatch(/providers\.yaml does not exist[\s\S]*not sent[\s\S]*↑/);
    up(screen);
    expect(screen.composer.text).toBe('first try');
  });
});

describe('terminal UI in a pseudo-terminal: a first run without providers.yaml', { timeout: 60_000 }, () => {
  let harness: InProcessServer | undefined;
  let tui: TmuxTerminal | undefined;

  afterEach(async () => {
    await tui?.kill();
    await harness?.stop();
    harness = tui = undefined;
  });

  it('keeps the refused prompt in the composer; once providers.yaml is written, Enter sends it', async () => {
    const providers = { path: '', text: '' };
    harness = await startInProcessServer('responses:\n  - text: "ANSWER-AFTER-SETUP"\n', {
      beforeStart: (environment) => {
        providers.path = path.join(environment.paths.configDir, 'providers.yaml');
        providers.text = readFileSync(providers.path, 'utf8');
        rmSync(providers.path);
      },
    });
    const env = harness.environment;
    tui = await TmuxTerminal.start([process.execPath, CLI_EXECUTABLE], { env: { ...env.env, TERM: 'tmux-256color', NO_COLOR: '1' }, cwd: env.workDir, columns: 100, rows: 30 });
    await tui.waitFor('Ask for anything');
    await tui.type('explain the build');
    await tui.keys('Enter');
    const refused = await tui.waitFor('providers.yaml');
    expect(refused).toMatch(/› explain the build/);

    writeFileSync(providers.path, providers.text);
    // The server also reads it by itself after a moment; asking makes the test not wait on that.
    expect(await harness.client.request('config/reload', {})).toEqual({ ok: true });
    await tui.keys('Enter');
    const answered = await tui.waitFor('ANSWER-AFTER-SETUP');
    expect(answered).toContain('› explain the build');
  });
});
