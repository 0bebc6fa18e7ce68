/**
 * What the terminal UI shows after its history changes under it: a rewind leaves exactly the
 * kept turns on screen (none of the dropped turns' items, subagent work, turn-end lines or
 * notices), and a fork, a new conversation or another conversation starts from a clean
 * transcript. Driven through the screen state with a scripted protocol client.
 */
import { describe, expect, it } from 'vitest';
import type { RuntimeClient } from '../../src/client/runtime-client.js';
import type { AnyNotification, Conversation, Item, Session, Turn } from '../../src/protocol/index.js';
import { ConversationController } from '../../src/tui/conversation-controller.js';
import { TuiScreen } from '../../src/tui/screen.js';
import { TranscriptModel } from '../../src/tui/transcript-model.js';

const CONV = 'conv_1';
const ROOT = 'sess_root';
const CHILD = 'sess_child';

const conversation = (id = CONV): Conversation => ({ id, title: 't', workLocation: [{ executor: 'local', cwd: '/w' }], rootSessionId: ROOT, createdAt: 0, updatedAt: 0 }) as Conversation;
const session = (id: string, parentSessionId: string | null = null): Session => ({ id, parentSessionId, status: 'idle', queuedInputs: [], pendingApprovals: [], pendingUserInputs: [], activeTurnId: null }) as unknown as Session;
const turn = (id: string, sessionId = ROOT): Turn => ({ id, sessionId, status: 'completed', startedAt: 0, completedAt: 1000, steps: 1, usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 } }) as unknown as Turn;
const base = (id: string, turnId: string, sessionId = ROOT) => ({ id, sessionId, turnId, createdAt: 0, completedAt: 0, status: 'completed' as const });
const prompt = (id: string, turnId: string, text: string): Item => ({ ...base(id, turnId), kind: 'user_message', content: [{ type: 'text', text }], mode: 'input', inputId: `in-${id}` }) as Item;
const answer = (id: string, turnId: string, text: string, sessionId = ROOT): Item => ({ ...base(id, turnId, sessionId), kind: 'assistant_message', text, model: 'm' });

const completed = (item: Item, seq: number): AnyNotification => ({ method: 'item/completed', params: { conversationId: CONV, sessionId: item.sessionId, seq, item } }) as AnyNotification;
const turnCompleted = (id: string, sessionId = ROOT): AnyNotification => ({ method: 'turn/completed', params: { conversationId: CONV, turn: turn(id, sessionId), seq: 0 } }) as unknown as AnyNotification;

/** Two turns: the second spawned a subagent, was steered with a notice in between, and ended. */
function twoTurns(): AnyNotification[] {
  return [
    completed(prompt('u1', 't1', 'FIRST-PROMPT'), 1),
    completed(answer('a1', 't1', 'FIRST-ANSWER'), 2),
    turnCompleted('t1'),
    completed(prompt('u2', 't2', 'SECOND-PROMPT'), 3),
    { method: 'item/started', params: { conversationId: CONV, sessionId: CHILD, turnId: 'tc', itemId: 'c0', kind: 'assistant_message', seq: 1, partial: {} } } as AnyNotification,
    completed(answer('c1', 'tc', 'CHILD-ANSWER', CHILD), 1),
    turnCompleted('tc', CHILD),
    completed(answer('a2', 't2', 'SECOND-ANSWER'), 4),
    { method: 'turn/warning', params: { conversationId: CONV, sessionId: ROOT, turnId: 't2', message: 'SECOND-WARNING' } } as AnyNotification,
    turnCompleted('t2'),
  ];
}

/** A client that answers the requests the screen makes, and tells the screen what the server would. */
function scriptedClient(options: { rewoundAfterAnswer?: boolean } = {}) {
  const listeners: ((event: AnyNotification) => void)[] = [];
  const emit = (event: AnyNotification) => listeners.forEach((listener) => listener(event));
  let opened = CONV;
  const client = {
    onNotification(listener: (event: AnyNotification) => void) {
      listeners.push(listener);
      return () => undefined;
    },
    async request(method: string, params: Record<string, unknown>): Promise<unknown> {
      switch (method) {
        case 'conversation/subscribe':
          opened = params.conversationId as string;
          return { conversation: conversation(opened), sessions: [session(ROOT), session(CHILD, ROOT)], turns: [], heads: { [ROOT]: 0 } };
        case 'conversation/rewind': {
          // Subscribers hear session/rewound, before the answer or (over another path) after it.
          const rewound = { method: 'session/rewound', params: { conversationId: CONV, sessionId: ROOT, afterSeq: 2, historyEpoch: 1, rewoundTurnIds: ['t2'] } } as AnyNotification;
          if (options.rewoundAfterAnswer) setTimeout(() => emit(rewound), 0);
          else emit(rewound);
          return { session: session(ROOT), afterSeq: 2, dropped: 2, rewoundTurnIds: ['t2'] };
        }
        case 'items/list':
          return { items: params.limit === 1 ? [{ seq: 4, item: answer('a2', 't2', 'SECOND-ANSWER') }] : [] };
        case 'conversation/fork':
          return { conversation: conversation('conv_fork') };
        default:
          return {};
      }
    },
  };
  return { client: client as unknown as RuntimeClient, emit };
}

async function openScreen(rows = 40, options: { rewoundAfterAnswer?: boolean } = {}) {
  const { client, emit } = scriptedClient(options);
  const controller = new ConversationController(client, { cwd: '/w' });
  const screen = new TuiScreen(controller, client, false);
  screen.size = { columns: 80, rows };
  await controller.open(CONV);
  for (const event of twoTurns()) emit(event);
  return { screen, controller, emit };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 10));
const shown = (screen: TuiScreen) => screen.frame().join('\n');

describe('terminal UI: after a rewind', () => {
  it.each([
    ['heard before the answer', false],
    ['heard after the answer', true],
  ])('shows exactly the kept turns: no item, subagent work, turn-end line or notice of a dropped turn (rewind %s)', async (_when, rewoundAfterAnswer) => {
    const { screen } = await openScreen(40, { rewoundAfterAnswer });
    const before = shown(screen);
    expect(before).toContain('SECOND-ANSWER');
    expect(before).toContain('CHILD-ANSWER');
    expect(before.match(/turn completed/g)).toHaveLength(2);

    screen.notify('queued: SECOND-NOTICE');
    screen.composer.insert('/rewind');
    screen.handleInput('', { return: true } as never);
    expect(screen.picker?.items.map((item) => item.label)).toEqual(['SECOND-PROMPT']);
    screen.handleInput('', { return: true } as never);
    await settle();

    expect(screen.composer.text).toBe('SECOND-PROMPT');
    screen.composer.clear();
    const after = shown(screen);
    for (const gone of ['SECOND-PROMPT', 'SECOND-ANSWER', 'CHILD-ANSWER', 'SECOND-WARNING', 'SECOND-NOTICE']) expect(after).not.toContain(gone);
    expect(after).toContain('FIRST-PROMPT');
    expect(after).toContain('FIRST-ANSWER');
    expect(after.match(/turn completed/g)).toHaveLength(1);
    expect(after).toContain('rewound: 2 items dropped');
  });

  it('forgets the dropped turns', () => {
    const model = new TranscriptModel();
    model.reset({ conversation: conversation(), sessions: [session(ROOT)], turns: [] });
    for (const event of twoTurns()) model.apply(event);
    model.apply({ method: 'session/rewound', params: { conversationId: CONV, sessionId: ROOT, afterSeq: 2, historyEpoch: 1, rewoundTurnIds: ['t2'] } } as AnyNotification);
    expect([...model.turns.keys()]).not.toContain('t2');
    expect(model.entries.map((entry) => entry.item?.id ?? entry.notice?.text.split(' ').slice(0, 2).join(' '))).toEqual(['u1', 'a1', 'turn completed']);
  });

  it('keeps the screen on the kept turns when it was scrolled up into the dropped ones', async () => {
    const { screen, controller } = await openScreen(12);
    screen.anchor = { key: 'a2', line: 0 };
    expect(shown(screen)).toContain('SECOND-ANSWER');
    await controller.rewind('a1');
    screen.notify('rewound');
    const after = shown(screen);
    expect(after).not.toContain('SECOND-ANSWER');
    expect(after).toContain('FIRST-ANSWER');
  });
});

describe('terminal UI: a fresh transcript', () => {
  it.each([
    ['/fork', 'forked conv_1 into conv_fork'],
    ['/new', 'new conversation in /w'],
  ])('after %s, nothing of the conversation left', async (command, expected) => {
    const { screen } = await openScreen();
    screen.composer.insert(command);
    screen.handleInput('', { return: true } as never);
    await settle();
    const after = shown(screen);
    expect(after).toContain(expected);
    for (const gone of ['FIRST-PROMPT', 'SECOND-ANSWER', 'CHILD-ANSWER', 'turn completed']) expect(after).not.toContain(gone);
  });
});
