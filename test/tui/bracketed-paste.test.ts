/**
 * Bracketed pastes as a terminal delivers them: one paste spread over several reads of stdin
 * (a pseudo-terminal hands over about 4 KB per read), its markers cut between two reads,
 * keys typed before and after it in the same read, an end marker that never comes.
 */
import { PassThrough, Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { RuntimeClient } from '../../src/client/runtime-client.js';
import { renderApp } from '../../src/tui/app.js';
import { CUT_MARKER_WAIT_MS, PASTE_END, PASTE_START, PasteSeparatingInput, PasteSplitter, UNFINISHED_PASTE_WAIT_MS, type InputPart } from '../../src/tui/bracketed-paste.js';
import { ConversationController } from '../../src/tui/conversation-controller.js';
import { TuiScreen } from '../../src/tui/screen.js';

const START = PASTE_START;
const END = PASTE_END;

/** A terminal for Ink whose input is written chunk by chunk, each chunk read on its own. */
function fakeTerminal() {
  const stdin = Object.assign(new PassThrough(), { isTTY: true, setRawMode: () => stdin, ref: () => stdin, unref: () => stdin });
  const stdout = Object.assign(new Writable({ write: (_chunk, _encoding, callback) => callback() }), { columns: 100, rows: 30, isTTY: true });
  return { stdin: stdin as unknown as NodeJS.ReadStream, stdout: stdout as unknown as NodeJS.WriteStream };
}

const unmounts: Array<() => void> = [];
afterEach(() => {
  for (const unmount of unmounts.splice(0)) unmount();
});

/** The UI drawn by Ink on a fake terminal, with a client that never answers. */
function openUi() {
  const client = { onNotification: () => () => undefined, request: () => new Promise(() => undefined) } as unknown as RuntimeClient;
  const screen = new TuiScreen(new ConversationController(client, { cwd: '/' }), client, false);
  const terminal = fakeTerminal();
  const instance = renderApp(screen, { stdin: terminal.stdin, stdout: terminal.stdout, stderr: terminal.stdout });
  unmounts.push(() => instance.unmount());
  /** Writes each chunk as its own read, the way the terminal's reads arrive one after another. */
  const send = async (...chunks: string[]) => {
    for (const chunk of chunks) {
      (terminal.stdin as unknown as PassThrough).write(chunk);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  };
  return { screen, send };
}

/** `text` cut into pieces of `size` characters, as successive reads deliver it. */
const reads = (text: string, size: number) => Array.from({ length: Math.ceil(text.length / size) }, (_, index) => text.slice(index * size, (index + 1) * size));

const LONG = Array.from({ length: 200 }, (_, index) => `line ${index} of the pasted text, long enough to be read in several parts`).join('\r');
const SENT = LONG.replace(/\r/g, '\n');

describe('a bracketed paste arriving in several reads', () => {
  it('is one placeholder, sent whole', async () => {
    const { screen, send } = openUi();
    await send(...reads(`${START}${LONG}${END}`, 4095));
    await expect.poll(() => screen.composer.text).toBe(`[pasted text #1: 200 lines, ${SENT.length} characters]`);
    expect(screen.composer.take()).toBe(SENT);
  });

  it('keeps its markers out of the text when they are cut between two reads, and keeps the keys around it in order', async () => {
    const { screen, send } = openUi();
    const whole = `see ${START}${LONG}${END}ok`;
    // Cuts inside the start marker, inside the end marker, and right after the escape of each.
    const cuts = [whole.indexOf(START) + 3, whole.indexOf(START) + 1 + 4000, whole.indexOf(END) + 1, whole.indexOf(END) + 4];
    const pieces = [0, ...cuts, whole.length].slice(1).map((end, index, all) => whole.slice(index === 0 ? 0 : (all[index - 1] ?? 0), end));
    await send(...pieces);
    await expect.poll(() => screen.composer.text).toBe(`see [pasted text #1: 200 lines, ${SENT.length} characters]ok`);
    expect(screen.composer.take()).toBe(`see ${SENT}ok`);
  });

  it('lets keys typed right after the end marker in the same read act as keys', async () => {
    const { screen, send } = openUi();
    const small = 'first\rsecond';
    await send(`${START}${small}${END}!\u0017x`);
    // Ctrl+W after the paste deletes the word before the cursor, as typed keys do.
    await expect.poll(() => screen.composer.text).toBe('first\nx');
  });
});

/** The parts of `chunks` read one after another, neighbouring keys joined (Ink reads them as one text anyway). */
function split(chunks: string[]): InputPart[] {
  const splitter = new PasteSplitter();
  const parts = chunks.flatMap((chunk) => splitter.push(chunk));
  return parts.reduce<InputPart[]>((joined, part) => {
    const last = joined.at(-1);
    if (last && 'keys' in last && 'keys' in part) joined[joined.length - 1] = { keys: last.keys + part.keys };
    else joined.push(part);
    return joined;
  }, []);
}

describe('PasteSplitter', () => {
  const whole = `ab\u001b[A${START}one\r\u001b[31mtwo${START}\u001b${END}\u0017x${START}${END}`;
  const expected: InputPart[] = [{ keys: 'ab\u001b[A' }, { paste: `one\r\u001b[31mtwo${START}\u001b` }, { keys: '\u0017x' }, { paste: '' }];

  it('gives the same keys and pastes wherever the reads cut the input, markers included', () => {
    for (let cut = 0; cut <= whole.length; cut++) expect(split([whole.slice(0, cut), whole.slice(cut)]), `cut at ${cut}`).toEqual(expected);
    for (let first = 0; first <= whole.length; first++) {
      for (let second = first; second <= whole.length; second++) expect(split([whole.slice(0, first), whole.slice(first, second), whole.slice(second)])).toEqual(expected);
    }
    expect(split([...whole])).toEqual(expected);
  });

  it('holds back only what may begin a marker, and lets a lone Esc go when nothing completes it', () => {
    const splitter = new PasteSplitter();
    expect(splitter.push('abc\u001b')).toEqual([{ keys: 'abc' }]);
    expect(splitter.holding).toBe(true);
    expect(splitter.release()).toEqual([{ keys: '\u001b' }]);
    expect(splitter.push('\u001b[2')).toEqual([]);
    expect(splitter.push('~')).toEqual([{ keys: '\u001b[2~' }]);
    // `ESC[20` is no key: only a marker cut short, dropped rather than typed into the composer.
    expect(splitter.push('\u001b[20')).toEqual([]);
    expect(splitter.release()).toEqual([]);
    expect(splitter.holding).toBe(false);
  });

  it('takes what came of a paste whose end does not come as the whole paste, and swallows an end marker coming later', () => {
    const splitter = new PasteSplitter();
    expect(splitter.push(`${START}partial\rtext\u001b[20`)).toEqual([]);
    expect(splitter.pasting).toBe(true);
    expect(splitter.endUnfinished()).toEqual([{ paste: 'partial\rtext' }]);
    expect(splitter.pasting).toBe(false);
    expect(splitter.push('1~typed')).toEqual([{ keys: 'typed' }]);
    expect(splitter.push(`${END}more`)).toEqual([{ keys: 'more' }]);
    // The start of an end marker that never comes is no Esc or Alt+[ key either.
    splitter.push(`${START}cut\u001b[`);
    expect(splitter.endUnfinished()).toEqual([{ paste: 'cut' }]);
    expect(splitter.release()).toEqual([]);
  });
});

/** A fake terminal's stdin behind `PasteSeparatingInput`: what Ink would read, each paste in its place. */
function separated() {
  const { stdin } = fakeTerminal();
  const pastes: string[] = [];
  const input = new PasteSeparatingInput(stdin, (text) => pastes.push(`<${text}>`));
  const seen: string[] = [];
  input.stream.setEncoding('utf8');
  input.stream.on('data', (text: string) => seen.push(text.replace(START, pastes.shift() ?? '<none>')));
  input.stream.setRawMode(true);
  unmounts.push(() => input.dispose());
  const write = (chunk: string | Buffer) => (stdin as unknown as PassThrough).write(chunk);
  return { write, read: () => seen.join('') };
}

/** Lets the streams pass on what was written (their events are not timers). */
async function settle(): Promise<void> {
  for (let round = 0; round < 5; round++) await new Promise((resolve) => setImmediate(resolve));
}

describe('PasteSeparatingInput', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('lets a lone Esc through after a short wait, and keeps a character cut between two reads whole', async () => {
    const { write, read } = separated();
    write('\u001b');
    await settle();
    expect(read()).toBe('');
    await vi.advanceTimersByTimeAsync(CUT_MARKER_WAIT_MS);
    await settle();
    expect(read()).toBe('\u001b');
    const check = Buffer.from(`${START}✓${END}`);
    write(check.subarray(0, START.length + 1));
    await settle();
    write(check.subarray(START.length + 1));
    await settle();
    expect(read()).toBe('\u001b<✓>');
  });

  it('ends a paste whose end marker does not come with what came, and then reads keys again', async () => {
    const { write, read } = separated();
    write(`${START}stalled\rpaste${END.slice(0, 3)}`);
    await settle();
    await vi.advanceTimersByTimeAsync(UNFINISHED_PASTE_WAIT_MS - 1);
    await settle();
    expect(read()).toBe('');
    await vi.advanceTimersByTimeAsync(1);
    await settle();
    expect(read()).toBe('<stalled\rpaste>');
    // The rest of the end marker, late, is no key; what follows it is.
    write(`${END.slice(3)}x\r`);
    await settle();
    expect(read()).toBe('<stalled\rpaste>x\r');
  });
});
