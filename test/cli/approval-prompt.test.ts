/**
 * The approval questions of `openvaala exec`, on a terminal made of streams: asked one at a
 * time in the order they came (one answer answers one question), the rest of the output held
 * while a question is asked, Ctrl-C (cancel) ending the asked question and those waiting, and a
 * question decided elsewhere taken off the terminal or never asked.
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ApprovalPrompt } from '../../src/cli/approval-prompt.js';
import { describeResolution } from '../../src/cli/exec.js';
import { HeldOutput } from '../../src/cli/held-output.js';
import { commandLine, resumeCommand, serverDirectories } from '../../src/client/resume-command.js';
import type { ApprovalRequest } from '../../src/protocol/index.js';

function terminal() {
  const input = Object.assign(new PassThrough(), { isTTY: true }) as unknown as NodeJS.ReadStream & PassThrough;
  const stderr = new PassThrough();
  let written = '';
  stderr.on('data', (chunk: Buffer) => (written += chunk.toString()));
  const events: string[] = [];
  const prompt = new ApprovalPrompt({ stdout: new PassThrough(), stderr }, input, { hold: () => events.push('hold'), release: () => events.push('release') });
  return { input, prompt, events, written: () => written };
}

function request(approvalId: string, command: string): ApprovalRequest {
  return {
    approvalId,
    conversationId: 'conv_1',
    sessionId: 'sess_1',
    turnId: 'turn_1',
    callId: `call_${approvalId}`,
    itemId: `item_${approvalId}`,
    toolName: 'exec_command',
    arguments: { command },
    reason: 'asked by the default of agent "careful"',
  } as ApprovalRequest;
}

/** Lets the line editor read what was typed and the next question start. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

describe('ApprovalPrompt', () => {
  it('asks questions that come together one at a time: one answer answers only the first', async () => {
    const { input, prompt, events, written } = terminal();
    const first = prompt.ask(request('a1', 'touch one'));
    const second = prompt.ask(request('a2', 'touch two'));
    let secondAnswered = false;
    second.then(() => (secondAnswered = true), () => undefined);
    await settle();
    expect(written()).toContain('touch one');
    expect(written()).not.toContain('touch two');
    input.write('y\n');
    expect(await first).toEqual({ decision: 'allow_once' });
    await settle();
    expect(secondAnswered).toBe(false);
    expect(written()).toContain('touch two');
    input.write('n\n');
    expect(await second).toEqual({ decision: 'deny' });
    // The rest of the output waits during each question and is let go between them.
    expect(events).toEqual(['hold', 'release', 'hold', 'release']);
  });

  it('asks again after an answer it does not know (an empty line, another letter), and takes the next one', async () => {
    const { input, prompt, written } = terminal();
    const answer = prompt.ask(request('a1', 'rm -rf build'));
    await settle();
    input.write('q\n');
    await settle();
    input.write('\n');
    await settle();
    expect(written().match(/answer y, a, n or x: /g)).toHaveLength(2);
    input.write('n\n');
    expect(await answer).toEqual({ decision: 'deny' });
  });

  it('cancel ends the question asked and those waiting, which are never shown', async () => {
    const { prompt, written } = terminal();
    const first = prompt.ask(request('a1', 'touch one'));
    const second = prompt.ask(request('a2', 'touch two'));
    await settle();
    prompt.cancel();
    expect((await first).decision).toBe('deny');
    expect((await second).decision).toBe('deny');
    expect(written()).toContain('denied (Ctrl-C)');
    expect(written()).not.toContain('touch two');
  });

  it('a question asked after a cancel is asked', async () => {
    const { input, prompt } = terminal();
    prompt.cancel();
    const later = prompt.ask(request('a3', 'touch three'));
    await settle();
    input.write('a\n');
    expect(await later).toEqual({ decision: 'allow_session' });
  });

  it('a question decided elsewhere leaves the terminal with a note, and one waiting is not asked', async () => {
    const { input, prompt, written } = terminal();
    const first = prompt.ask(request('a1', 'touch one'));
    const second = prompt.ask(request('a2', 'touch two'));
    const third = prompt.ask(request('a3', 'touch three'));
    await settle();
    prompt.withdraw('a2', 'allowed elsewhere (by web)');
    prompt.withdraw('a1', 'denied elsewhere (by web)');
    expect((await first).decision).toBe('deny');
    await second;
    await settle();
    expect(written()).toContain('denied elsewhere (by web)');
    expect(written()).not.toContain('touch two');
    expect(written()).toContain('touch three');
    input.write('y\n');
    expect(await third).toEqual({ decision: 'allow_once' });
    // An id that is neither asked nor waiting changes nothing.
    prompt.withdraw('a9', 'ignored');
    expect(written()).not.toContain('ignored');
  });

  it('says how a withdrawn question was decided', () => {
    expect(describeResolution({ decision: 'allow_once', decidedBy: 'client:web' })).toBe('allowed elsewhere (by web)');
    expect(describeResolution({ decision: 'deny', decidedBy: 'client:tui' })).toBe('denied elsewhere (by tui)');
    expect(describeResolution({ decision: 'deny', decidedBy: 'interruption' })).toBe('no longer asked: the turn was interrupted');
  });
});

describe('HeldOutput', () => {
  it('writes through, keeps writes while held, and writes them in order on release', () => {
    const out: string[] = [];
    const sink = (name: string) => Object.assign(new PassThrough(), { write: (chunk: string) => out.push(`${name}:${chunk}`) > 0 }) as unknown as NodeJS.WritableStream;
    const held = new HeldOutput({ stdout: sink('out'), stderr: sink('err') });
    held.streams.stdout.write('a');
    held.hold();
    held.hold();
    held.streams.stderr.write('b');
    held.streams.stdout.write('c');
    expect(out).toEqual(['out:a']);
    expect(held.holding).toBe(true);
    held.release();
    expect(out).toEqual(['out:a', 'err:b', 'out:c']);
    held.streams.stdout.write('d');
    expect(out.at(-1)).toBe('out:d');
  });
});

describe('resumeCommand', () => {
  const environment = { HOME: '/home/user', XDG_DATA_HOME: '/home/user/.local/share', XDG_CONFIG_HOME: '/home/user/.config' };
  it('is the bare command for the default directories', () => {
    expect(resumeCommand('exec', 'conv_1', { dataDir: '/home/user/.local/share/openvaala', configDir: '/home/user/.config/openvaala' }, environment)).toBe('openvaala exec --resume conv_1 "…"');
    expect(resumeCommand('tui', 'conv_1', { dataDir: '/home/user/.local/share/openvaala', configDir: '/home/user/.config/openvaala' }, environment)).toBe('openvaala tui --resume conv_1');
  });

  it('names the data and configuration directories that are not the defaults, quoted for a shell when they must be', () => {
    expect(resumeCommand('exec', 'conv_1', { dataDir: '/srv/agent data', configDir: '/srv/conf' }, environment)).toBe(`openvaala exec --data-dir '/srv/agent data' --config-dir /srv/conf --resume conv_1 "…"`);
    expect(resumeCommand('tui', 'conv_1', { dataDir: "/srv/it's", configDir: '/home/user/.config/openvaala' }, environment)).toBe(`openvaala tui --data-dir '/srv/it'\\''s' --resume conv_1`);
  });

  it('names the configuration directory of the server that was used, not only the one the command was given', () => {
    const given = { dataDir: '/srv/data', configDir: '/home/user/.config/openvaala' };
    expect(resumeCommand('exec', 'conv_1', serverDirectories({ configDir: '/srv/conf' }, given), environment)).toBe('openvaala exec --data-dir /srv/data --config-dir /srv/conf --resume conv_1 "…"');
    // A record of an older server that did not write its configuration directory.
    expect(serverDirectories({}, given)).toEqual(given);
  });
});

describe('commandLine', () => {
  const environment = { HOME: '/home/user', XDG_DATA_HOME: '/home/user/.local/share', XDG_CONFIG_HOME: '/home/user/.config' };
  it('adds the directories that are not the defaults after the command, each word quoted when it must be', () => {
    const defaults = { dataDir: '/home/user/.local/share/openvaala', configDir: '/home/user/.config/openvaala' };
    expect(commandLine(['server', 'restart'], defaults, environment)).toBe('openvaala server restart');
    expect(commandLine(['server', 'restart'], { dataDir: '/srv/data', configDir: '/srv/my conf' }, environment)).toBe(`openvaala server restart --data-dir /srv/data --config-dir '/srv/my conf'`);
    // A command that takes only --config-dir is given no data directory.
    expect(commandLine(['auth', 'set', 'my provider'], { configDir: '/srv/conf' }, environment)).toBe(`openvaala auth set 'my provider' --config-dir /srv/conf`);
  });
});
