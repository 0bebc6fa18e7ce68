/**
 * `openvaala exec --resume` on a conversation that is busy: each exec prints the turn its own
 * prompt started, not the turns queued before it (another client's, another exec's), in plain
 * and in `--json` output.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { stopOwnTurn } from '../../src/cli/exec.js';
import { OwnTurnEvents } from '../../src/cli/exec-turn-events.js';
import type { AnyNotification } from '../../src/protocol/index.js';
import { startInProcessServer, type InProcessServer } from '../helpers/in-process-server.js';
import { execAgainst } from './exec-harness.js';

let harness: InProcessServer | undefined;
afterEach(async () => {
  vi.unstubAllEnvs();
  await harness?.stop();
  harness = undefined;
});

const script = `
responses:
  - text: "FIRST-ANSWER from the other client"
    holds: [{ afterDeltas: 0, gate: first }]
  - text: "SECOND-ANSWER"
  - text: "THIRD-ANSWER"
`;

/** Waits until the root session's queue holds an input with `text`. */
async function queued(server: InProcessServer, text: string): Promise<void> {
  await server.waitFor((event) => event.method === 'session/updated' && event.params.session.queuedInputs.some((input) => input.text === text));
}

/** Starts a turn held before its first delta, from the harness's own client. */
async function busyConversation(server: InProcessServer): Promise<{ conversationId: string; firstTurnId: string }> {
  const conversationId = await server.conversation();
  const first = await server.client.request('session/input', { conversationId, input: 'first' });
  await server.environment.mock.waitForHold('first', 20_000);
  return { conversationId, firstTurnId: first.turnId ?? '' };
}

describe('exec --resume while other turns run or wait', () => {
  it('prints only its own turn, in plain output', async () => {
    harness = await startInProcessServer(script);
    const { conversationId } = await busyConversation(harness);
    const second = execAgainst(harness, 'second', { resume: conversationId });
    await queued(harness, 'second');
    const third = execAgainst(harness, 'third', { resume: conversationId });
    await queued(harness, 'third');
    harness.environment.mock.release('first');
    const [secondRun, thirdRun] = await Promise.all([second, third]);
    expect(secondRun.code, secondRun.stderr).toBe(0);
    expect(thirdRun.code, thirdRun.stderr).toBe(0);
    expect(secondRun.stdout).toBe('SECOND-ANSWER\n');
    expect(thirdRun.stdout).toBe('THIRD-ANSWER\n');
    expect(secondRun.stderr).toContain('the conversation is busy');
  });

  it('prints only the events of its own turn with --json', async () => {
    harness = await startInProcessServer(script);
    const { conversationId, firstTurnId } = await busyConversation(harness);
    const second = execAgainst(harness, 'second', { resume: conversationId, json: true });
    await queued(harness, 'second');
    harness.environment.mock.release('first');
    const run = await second;
    expect(run.code, run.stderr).toBe(0);
    const events = run.stdout.trim().split('\n').map((line) => JSON.parse(line) as AnyNotification);
    const turnIds = new Set(events.flatMap((event) => {
      const params = event.params as { turnId?: string; turn?: { id: string }; item?: { turnId: string } };
      return [params.turnId, params.turn?.id, params.item?.turnId].filter((id): id is string => id !== undefined);
    }));
    expect(turnIds.has(firstTurnId)).toBe(false);
    expect(turnIds.size).toBe(1);
    expect(events[0]?.method).toBe('turn/started');
    expect(events.at(-1)?.method).toBe('turn/completed');
    expect(run.stdout).toContain('SECOND-ANSWER');
    expect(run.stdout).not.toContain('FIRST-ANSWER');
  });
});

describe('OwnTurnEvents', () => {
  const turn = (method: string, id: string, sessionId = 'sess_root') => ({ method, params: { conversationId: 'c', seq: 1, turn: { id, sessionId } } }) as unknown as AnyNotification;
  const delta = (turnId: string, sessionId = 'sess_root') => ({ method: 'item/delta', params: { conversationId: 'c', sessionId, turnId, itemId: `item_${turnId}`, kind: 'assistant_message', seq: 1, delta: { text: turnId } } }) as unknown as AnyNotification;
  const state = { method: 'session/updated', params: { conversationId: 'c', seq: 1, session: { id: 'sess_root' } } } as unknown as AnyNotification;

  it("keeps events back until its turn is known, then lets through only its turn's, its subagents' while it runs, and state in between", () => {
    const own = new OwnTurnEvents('sess_root');
    expect(own.receive(turn('turn/started', 'turn_other'))).toEqual([]);
    expect(own.receive(delta('turn_other'))).toEqual([]);
    expect(own.receive(state)).toEqual([]);
    // The other turn's subagent works before exec's turn starts: not exec's.
    expect(own.receive(delta('turn_sub0', 'sess_child'))).toEqual([]);
    expect(own.start('turn_mine')).toEqual([]);
    expect(own.receive(turn('turn/completed', 'turn_other'))).toEqual([]);
    expect(own.asksFor({ sessionId: 'sess_child', turnId: 'turn_sub0' })).toBe(false);
    const started = turn('turn/started', 'turn_mine');
    expect(own.receive(started)).toEqual([started]);
    expect(own.receive(state)).toEqual([state]);
    expect(own.receive(delta('turn_mine'))).toEqual([delta('turn_mine')]);
    expect(own.receive(delta('turn_sub1', 'sess_child'))).toEqual([delta('turn_sub1', 'sess_child')]);
    expect(own.asksFor({ sessionId: 'sess_child', turnId: 'turn_sub1' })).toBe(true);
    expect(own.asksFor({ sessionId: 'sess_root', turnId: 'turn_mine' })).toBe(true);
    expect(own.asksFor({ sessionId: 'sess_root', turnId: 'turn_other' })).toBe(false);
    const completed = turn('turn/completed', 'turn_mine');
    expect(own.receive(completed)).toEqual([completed]);
    expect(own.receive(state)).toEqual([]);
  });

  it('gives back the events of its turn that came before session/input answered, in order', () => {
    const own = new OwnTurnEvents('sess_root');
    const events = [turn('turn/started', 'turn_mine'), delta('turn_mine'), delta('turn_sub', 'sess_child')];
    for (const event of events) expect(own.receive(event)).toEqual([]);
    expect(own.start('turn_mine')).toEqual(events);
  });
});

describe('Ctrl-C in an exec whose prompt waits behind another turn', () => {
  it('withdraws its own prompt from the queue and leaves the running turn alone', async () => {
    harness = await startInProcessServer(script);
    const { conversationId, firstTurnId } = await busyConversation(harness);
    const sessionId = (await harness.client.request('conversation/get', { conversationId })).conversation.rootSessionId;
    const second = await harness.client.request('session/input', { conversationId, input: 'second' });
    expect(second.queued).toBe(true);
    const outcome = await stopOwnTurn(harness.client, { conversationId, sessionId, inputId: second.inputId, turnId: second.turnId ?? '' });
    expect(outcome).toBe('dequeued');
    harness.environment.mock.release('first');
    const [first] = await harness.turnsCompleted(1);
    // The other client's turn ran to its end (an interrupt without a turn id stops whichever turn runs).
    expect(first).toMatchObject({ id: firstTurnId, status: 'completed' });
    const session = await harness.client.request('conversation/get', { conversationId });
    expect(session.sessions.find((candidate) => candidate.id === sessionId)?.queuedInputs).toEqual([]);
  });

  it('interrupts its own turn once it runs', async () => {
    harness = await startInProcessServer(script);
    const { conversationId, firstTurnId } = await busyConversation(harness);
    const sessionId = (await harness.client.request('conversation/get', { conversationId })).conversation.rootSessionId;
    const outcome = await stopOwnTurn(harness.client, { conversationId, sessionId, inputId: 'input_unused', turnId: firstTurnId });
    expect(outcome).toBe('interrupted');
    const [ended] = await harness.turnsCompleted(1);
    expect(ended).toMatchObject({ id: firstTurnId, status: 'interrupted' });
  });
});
