/**
 * Damaged stream files, written by hand (SPEC §4): torn final lines and corrupt lines are
 * reported with their location, skipped by reads without throwing, and repaired or stepped
 * over by the next append — never dropping a complete line. A stream file that cannot be read
 * at all (a directory, a named pipe, a dangling link) fails the operation naming the file and
 * why, and is left untouched.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readStreamEntries } from '../../src/dao/jsonl-file-reader.js';
import { FileLogStorage } from '../../src/storage/file/file-log-storage.js';
import type { LogProblem } from '../../src/storage/log-storage.js';

let directory: string;
let file: string;
let problems: LogProblem[];
let logs: FileLogStorage;

function line(seq: number, value: unknown): string {
  return `${JSON.stringify({ seq, value })}\n`;
}

function open(onProblem: (problem: LogProblem) => void = (problem) => problems.push(problem)): FileLogStorage {
  logs = new FileLogStorage(directory, { onProblem });
  return logs;
}

async function seqs(options?: Parameters<FileLogStorage['read']>[2]): Promise<number[]> {
  return (await logs.read('conv', 'main', options)).map((entry) => entry.seq);
}

beforeEach(() => {
  directory = fs.mkdtempSync(path.join(os.tmpdir(), 'openvaala-damage-'));
  fs.mkdirSync(path.join(directory, 'conv'));
  file = path.join(directory, 'conv', 'main.jsonl');
  problems = [];
});

afterEach(async () => {
  await logs?.close();
  fs.rmSync(directory, { recursive: true, force: true });
});

describe('a torn final line', () => {
  const complete = line(1, 'a') + line(2, { b: true }) + line(3, 'c');
  const torn = '{"seq":4,"value":{"half';

  beforeEach(() => {
    fs.writeFileSync(file, complete + torn);
  });

  it('is reported with the file and byte offset and kept out of reads', async () => {
    open();
    expect(await seqs()).toEqual([1, 2, 3]);
    expect(await seqs({ direction: 'backward' })).toEqual([3, 2, 1]);
    expect(await logs.lastSeq('conv', 'main')).toBe(3);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatchObject({ path: 'conv', stream: 'main', kind: 'torn_tail' });
    expect(problems[0]?.location).toContain(file);
    expect(problems[0]?.location).toContain(`byte offset ${Buffer.byteLength(complete)}`);
  });

  it('is cut off by the next append, which continues the seq and keeps its bytes beside the log', async () => {
    open();
    expect(await logs.append('conv', 'main', ['d'])).toEqual([{ seq: 4, value: 'd' }]);
    expect(problems[0]?.message).toBe(`incomplete last line (${torn.length} bytes) ignored; the next append cuts it off and keeps its bytes in main.jsonl.torn`);
    expect(fs.readFileSync(file, 'utf8')).toBe(complete + line(4, 'd'));
    expect(fs.readFileSync(`${file}.torn`, 'utf8')).toBe(torn);
    // Kept aside, not a stream of its own.
    expect(await logs.listStreams('conv')).toEqual(['main']);
    expect((await logs.read('conv', 'main')).map((entry) => entry.value)).toEqual(['a', { b: true }, 'c', 'd']);
    await logs.close();
    problems = [];
    open();
    expect(await seqs()).toEqual([1, 2, 3, 4]);
    expect(problems).toEqual([]);
  });

  it('is reported once, even when the file was closed for other files and read again', async () => {
    logs = new FileLogStorage(directory, { onProblem: (problem) => problems.push(problem), maximumOpenFiles: 1 });
    for (let round = 0; round < 3; round++) {
      expect(await seqs()).toEqual([1, 2, 3]);
      // Other files take the one open descriptor: what was known of main.jsonl is let go.
      await logs.append('conv', `other${round}`, ['x']);
      await logs.append('conv', `another${round}`, ['y']);
    }
    expect(problems.map((problem) => problem.kind)).toEqual(['torn_tail']);
  });

  it('made only of garbage, in an otherwise empty file, leaves an empty stream', async () => {
    fs.writeFileSync(file, 'garbage without newline');
    open();
    expect(await seqs()).toEqual([]);
    expect(await logs.append('conv', 'main', ['first'])).toEqual([{ seq: 1, value: 'first' }]);
    expect(fs.readFileSync(file, 'utf8')).toBe(line(1, 'first'));
    expect(problems[0]?.location).toContain('byte offset 0');
  });
});

describe('a complete last line without its newline', () => {
  it('is kept, reported, and terminated by the next append (never dropped)', async () => {
    const content = line(1, 'a') + line(2, 'b') + '{"seq":3,"value":"c"}';
    fs.writeFileSync(file, content);
    open();
    expect(await seqs()).toEqual([1, 2, 3]);
    expect(await seqs({ direction: 'backward', limit: 1 })).toEqual([3]);
    expect(problems.map((problem) => problem.kind)).toEqual(['torn_tail']);
    expect(await logs.append('conv', 'main', ['d', 'e'])).toEqual([
      { seq: 4, value: 'd' },
      { seq: 5, value: 'e' },
    ]);
    expect(fs.readFileSync(file, 'utf8')).toBe(`${content}\n${line(4, 'd')}${line(5, 'e')}`);
    expect(await seqs()).toEqual([1, 2, 3, 4, 5]);
  });
});

describe('a corrupt line in the middle', () => {
  const lines = [line(1, 'a'), line(2, 'b'), '{"seq":3,"value":"c"!!!}\n', line(4, 'd'), line(5, 'e')];

  beforeEach(() => {
    fs.writeFileSync(file, lines.join(''));
  });

  it('is reported with the file and line number and skipped in both directions', async () => {
    open();
    expect(await seqs()).toEqual([1, 2, 4, 5]);
    expect(await seqs({ direction: 'backward' })).toEqual([5, 4, 2, 1]);
    expect(await seqs({ after: 2 })).toEqual([4, 5]);
    expect(await seqs({ direction: 'backward', before: 4 })).toEqual([2, 1]);
    const corrupt = problems.filter((problem) => problem.kind === 'corrupt_line');
    expect(corrupt).toHaveLength(1);
    expect(corrupt[0]?.location).toContain(file);
    expect(corrupt[0]?.location).toContain('line 3');
    expect(corrupt[0]?.message).toMatch(/JSON/);
  });

  it('does not stop appends, which continue after the last valid line', async () => {
    open();
    expect(await logs.append('conv', 'main', ['f'])).toEqual([{ seq: 6, value: 'f' }]);
    expect(await seqs()).toEqual([1, 2, 4, 5, 6]);
    expect(fs.readFileSync(file, 'utf8')).toBe(lines.join('') + line(6, 'f'));
  });
});

describe('corrupt lines at the end', () => {
  it('are skipped; seq continues from the last valid line', async () => {
    fs.writeFileSync(file, line(1, 'a') + line(2, 'b') + 'not json at all\n' + '[1,2]\n');
    open();
    expect(await logs.lastSeq('conv', 'main')).toBe(2);
    expect(problems.map((problem) => problem.location.replace(file, 'FILE'))).toEqual([
      'FILE, line 4 (byte offset 60)',
      'FILE, line 3 (byte offset 44)',
    ]);
    expect(await logs.append('conv', 'main', ['c'])).toEqual([{ seq: 3, value: 'c' }]);
    expect(await seqs()).toEqual([1, 2, 3]);
  });
});

describe('a line whose seq does not follow the one before it (a file joined or restored by hand)', () => {
  it('at the end: is reported and skipped, and the next append follows the highest seq instead of writing one twice', async () => {
    fs.writeFileSync(file, line(1, 'a') + line(2, 'b') + line(1, 'a again'));
    open();
    expect(await logs.lastSeq('conv', 'main')).toBe(2);
    expect(problems).toEqual([expect.objectContaining({ kind: 'corrupt_line', message: expect.stringContaining('its seq 1 does not follow seq 2') })]);
    expect(problems[0]?.location).toContain(`byte offset ${(line(1, 'a') + line(2, 'b')).length}`);
    expect(await logs.append('conv', 'main', ['c'])).toEqual([{ seq: 3, value: 'c' }]);
    expect(await seqs()).toEqual([1, 2, 3]);
    expect(await seqs({ direction: 'backward' })).toEqual([3, 2, 1]);
    expect((await logs.read('conv', 'main', { after: 1, limit: 1 })).map((entry) => entry.value)).toEqual(['b']);
    expect((await logs.read('conv', 'main', { before: 3, direction: 'backward' })).map((entry) => entry.value)).toEqual(['b', 'a']);
  });

  it('in the middle: is skipped by every read, found going forward or backward, whatever the page', async () => {
    const lines = [line(1, 'a'), line(2, 'b'), line(3, 'c'), line(2, 'b again'), line(4, 'd'), line(5, 'e')];
    fs.writeFileSync(file, lines.join(''));
    open();
    expect(await logs.lastSeq('conv', 'main')).toBe(5);
    // Backward first, in pages, as a client scrolling up from the end reads.
    expect(await seqs({ direction: 'backward', limit: 2 })).toEqual([5, 4]);
    expect(await seqs({ direction: 'backward', before: 4, limit: 2 })).toEqual([3, 2]);
    expect(await seqs({ direction: 'backward', before: 4, after: 2 })).toEqual([3]);
    expect(await seqs()).toEqual([1, 2, 3, 4, 5]);
    expect(await seqs({ after: 2, limit: 2 })).toEqual([3, 4]);
    const values = (await logs.read('conv', 'main')).map((entry) => entry.value);
    expect(values).not.toContain('b again');
    expect(problems.map((problem) => problem.message)).toContain('corrupt line skipped: its seq 2 does not follow seq 3 of the line before it (seqs grow by one per line)');
  });
});

describe('a line whose seq jumps ahead (one seq edited or damaged, or lines lost before it)', () => {
  /** Entries of the file as `reindex` reads it (the whole-file reader of the dao). */
  function wholeFileSeqs(): number[] {
    return (readStreamEntries(directory, 'conv', 'main', () => undefined) ?? []).map((entry) => entry.seq);
  }
  const numbered = (seqs: number[]) => seqs.map((seq) => line(seq, `v${seq}`)).join('');

  it('in the middle, when the next line does not follow it: only it is skipped, every line after it is read, and appends are read too', async () => {
    fs.writeFileSync(file, numbered([1, 2, 3, 4, 50, 6, 7, 8]));
    open();
    expect(await logs.lastSeq('conv', 'main')).toBe(8);
    expect(await seqs()).toEqual([1, 2, 3, 4, 6, 7, 8]);
    expect(await seqs({ direction: 'backward', limit: 3 })).toEqual([8, 7, 6]);
    expect(await seqs({ direction: 'backward', before: 7 })).toEqual([6, 4, 3, 2, 1]);
    expect(await seqs({ after: 3, limit: 2 })).toEqual([4, 6]);
    expect(problems.map((problem) => problem.message)).toContain(
      'corrupt line skipped: its seq 50 jumps ahead of seq 4 of the entry before it, and the next line (seq 6) does not follow it (seqs grow by one per line)',
    );
    expect(await logs.append('conv', 'main', ['nine'])).toEqual([{ seq: 9, value: 'nine' }]);
    expect(await seqs({ after: 7 })).toEqual([8, 9]);
    expect(wholeFileSeqs()).toEqual([1, 2, 3, 4, 6, 7, 8, 9]);
  });

  it('followed by lines above it (lines lost before it): it and they are entries', async () => {
    fs.writeFileSync(file, numbered([1, 2, 3, 7, 8]));
    open();
    expect(await seqs()).toEqual([1, 2, 3, 7, 8]);
    expect(await seqs({ direction: 'backward' })).toEqual([8, 7, 3, 2, 1]);
    expect(problems).toEqual([]);
    expect(wholeFileSeqs()).toEqual([1, 2, 3, 7, 8]);
  });

  it('second to last: the last line is the last entry, and the next append follows it', async () => {
    fs.writeFileSync(file, numbered([1, 2, 3, 4, 50, 5]));
    open();
    expect(await logs.lastSeq('conv', 'main')).toBe(5);
    expect(await logs.append('conv', 'main', ['six'])).toEqual([{ seq: 6, value: 'six' }]);
    expect(await seqs()).toEqual([1, 2, 3, 4, 5, 6]);
    expect(await seqs({ direction: 'backward', limit: 2 })).toEqual([6, 5]);
    expect(wholeFileSeqs()).toEqual([1, 2, 3, 4, 5, 6]);
  });

  it('last: it is an entry (nothing after it says otherwise), and appends follow it', async () => {
    fs.writeFileSync(file, numbered([1, 2, 3, 50]));
    open();
    expect(await logs.lastSeq('conv', 'main')).toBe(50);
    expect(await logs.append('conv', 'main', ['next'])).toEqual([{ seq: 51, value: 'next' }]);
    expect(await seqs()).toEqual([1, 2, 3, 50, 51]);
    expect(wholeFileSeqs()).toEqual([1, 2, 3, 50, 51]);
  });

  it('on the first line: only it is skipped', async () => {
    fs.writeFileSync(file, numbered([90, 2, 3]));
    open();
    expect(await seqs()).toEqual([2, 3]);
    expect(await seqs({ direction: 'backward' })).toEqual([3, 2]);
    expect(wholeFileSeqs()).toEqual([2, 3]);
  });
});

describe('every kind of damage at once', () => {
  it('never makes a read throw, even with a listener that throws', async () => {
    const bad = [
      '\n',
      '   \n',
      '[1,2,3]\n',
      '"just a string"\n',
      '{"value":"no seq"}\n',
      '{"seq":"7","value":"seq is a string"}\n',
      '{"seq":0,"value":"seq zero"}\n',
      '{"seq":8}\n',
      '\u0000\u0001\u0002binary\n',
    ];
    const content = Buffer.concat([
      Buffer.from(line(1, 'a')),
      Buffer.from(bad.join('')),
      Buffer.from([0xff, 0xfe, 0x0a]),
      Buffer.from(line(2, 'b')),
      Buffer.from('{"seq":3,"val'),
    ]);
    fs.writeFileSync(file, content);
    let calls = 0;
    open(() => {
      calls += 1;
      throw new Error('listener failure');
    });
    expect(await seqs()).toEqual([1, 2]);
    expect(await seqs({ direction: 'backward' })).toEqual([2, 1]);
    expect(await seqs({ after: 1 })).toEqual([2]);
    expect(calls).toBe(bad.length + 2);
    expect(await logs.append('conv', 'main', ['c'])).toEqual([{ seq: 3, value: 'c' }]);
  });

  it('is found by cursor reads in a long stream with corrupt lines scattered through it', async () => {
    const parts: string[] = [];
    for (let seq = 1; seq <= 6000; seq += 1) {
      parts.push(seq % 97 === 0 ? `{"seq":${seq},"value":"corrupt\n` : line(seq, { seq, pad: 'x'.repeat(seq % 80) }));
    }
    fs.writeFileSync(file, parts.join(''));
    open();
    const valid = (seq: number): boolean => seq % 97 !== 0;
    for (const after of [0, 96, 97, 1000, 2910, 4849, 5998, 6000]) {
      const expected = [after + 1, after + 2, after + 3, after + 4].filter((seq) => seq <= 6000 && valid(seq)).slice(0, 3);
      expect((await seqs({ after, limit: 3 })).slice(0, expected.length), `after ${after}`).toEqual(expected);
      const before = after + 1;
      const backwardExpected = [after, after - 1, after - 2, after - 3].filter((seq) => seq >= 1 && valid(seq)).slice(0, 3);
      expect(await seqs({ direction: 'backward', before, limit: 3 }), `before ${before}`).toEqual(backwardExpected);
    }
    expect(await logs.lastSeq('conv', 'main')).toBe(6000);
  });
});

describe('the default problem listener', () => {
  it('emits a process warning naming the location', async () => {
    fs.writeFileSync(file, line(1, 'a') + 'torn');
    const warnings: Error[] = [];
    const onWarning = (warning: Error): void => {
      warnings.push(warning);
    };
    process.on('warning', onWarning);
    try {
      logs = new FileLogStorage(directory);
      expect(await logs.lastSeq('conv', 'main')).toBe(1);
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.some((warning) => warning.message.includes(file) && warning.message.includes('torn_tail'))).toBe(true);
    } finally {
      process.off('warning', onWarning);
    }
  });
});

describe('a stream file that cannot be read', () => {
  /** A file that is not a log, as found on disk, and what it is. */
  const cases: [string, string, () => void, (stats: fs.Stats) => boolean][] = [
    ['a directory', 'it is a directory', () => fs.mkdirSync(file), (stats) => stats.isDirectory()],
    ['a named pipe', 'it is a named pipe (FIFO)', () => execFileSync('mkfifo', [file]), (stats) => stats.isFIFO()],
    ['a dangling symbolic link', 'it is a symbolic link to a missing file', () => fs.symlinkSync(path.join(directory, 'gone.jsonl'), file), (stats) => stats.isSymbolicLink()],
  ];

  it.each(cases)('fails every read and append with an error naming the file and why, and is left as it is: %s', async (_label, reason, make, isStill) => {
    make();
    open();
    const expected = `log file ${file} cannot be read: ${reason}`;
    await expect(logs.read('conv', 'main')).rejects.toThrow(expected);
    await expect(logs.read('conv', 'main', { direction: 'backward', limit: 1 })).rejects.toThrow(expected);
    await expect(logs.lastSeq('conv', 'main')).rejects.toThrow(expected);
    await expect(logs.append('conv', 'main', ['x'])).rejects.toThrow(expected);
    // Refused again on the next use: nothing about the file was cached.
    await expect(logs.read('conv', 'main')).rejects.toThrow(expected);
    expect(isStill(fs.lstatSync(file))).toBe(true);
    expect(fs.readdirSync(path.join(directory, 'conv'))).toEqual(['main.jsonl']);
    expect(problems).toEqual([]);
  });

  it.skipIf(process.getuid?.() === 0)('names a file without read permission', async () => {
    fs.writeFileSync(file, line(1, 'a'));
    fs.chmodSync(file, 0o000);
    open();
    await expect(logs.read('conv', 'main')).rejects.toThrow(`log file ${file} cannot be read: permission denied (EACCES)`);
    fs.chmodSync(file, 0o600);
  });
});
