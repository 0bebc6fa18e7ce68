/**
 * Keys that arrive in one read of the terminal (typed faster than they are read, or sent by a
 * remote terminal in one packet) are split into the keys Ink reports when they arrive alone.
 */
import { describe, expect, it } from 'vitest';
import { splitKeystrokes } from '../../src/tui/keystrokes.js';

const described = (input: string) =>
  splitKeystrokes(input).map(([text, key]) => {
    const flags = Object.entries(key)
      .filter(([, on]) => on === true)
      .map(([name]) => name);
    return flags.length > 0 ? `${text}:${flags.join('+')}` : text;
  });

describe('splitKeystrokes', () => {
  it('splits text from the control keys typed after it, each reported as Ink reports it alone', () => {
    expect(described('steer this way\u0013')).toEqual(['steer this way', 's:ctrl']);
    expect(described('queued prompt\r')).toEqual(['queued prompt', '\r:return']);
    expect(described('ab\u007fc\tx\u0003')).toEqual(['ab', ':delete', 'c', ':tab', 'x', 'c:ctrl']);
    expect(described('\u0012\u000f\u0015\u0017\u0001\u0005\u0004')).toEqual(['r:ctrl', 'o:ctrl', 'u:ctrl', 'w:ctrl', 'a:ctrl', 'e:ctrl', 'd:ctrl']);
    expect(described('one\ntwo\b')).toEqual(['one', '\n', 'two', ':backspace']);
  });

  it('leaves a chunk without control characters whole, as one piece of text', () => {
    expect(described('plain words, ünïcode ✓')).toEqual(['plain words, ünïcode ✓']);
    expect(described('')).toEqual([]);
  });
});
