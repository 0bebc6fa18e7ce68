/**
 * Secret values in the forms they take in text (docs/platform.md, "Secrets"): the server writes
 * a value to the workspace `.env` quoted and escaped, and text quoting a value inside JSON (tool
 * arguments, tool output holding JSON) has it JSON-escaped, once or twice, with non-ASCII
 * characters as they are or as `\uXXXX`. Each of these forms is replaced by `***` like the
 * value itself, in whole texts and in streams.
 */
import { describe, expect, it } from 'vitest';
import { ENV_BLOCK_BEGIN, ENV_BLOCK_END, withManagedBlock } from '../../src/platform/secrets/env-file.js';
import { SecretRedactor, type StreamHeld } from '../../src/platform/secrets/secret-redactor.js';

const WEIRD = `pa ss#word "q" $HOME 'x'`;
/** Values that `.env` and JSON write differently from their raw text. */
const VALUES: Record<string, string> = {
  WEIRD,
  BACKSLASH: String.raw`C:\dir\new 'q' \n`,
  DOLLAR: 'cost$5 `id` $(whoami)',
  HASH: '#not-a-comment x',
  NEWLINE: 'line-one\nline-two',
  TAB_CR: 'col\tcol\rend',
  UNICODE: 'pässwörd-ünï-🔑-日本',
  QUOTES: `it's "both"`,
};

function redactorOf(...values: string[]): SecretRedactor {
  const redactor = new SecretRedactor();
  redactor.setValues(values);
  return redactor;
}

/** JSON-string escaping with every non-ASCII character as `\uXXXX` (Python's `json.dumps` default). */
function asciiJson(value: unknown): string {
  return JSON.stringify(value).replace(/[\u0080-\uffff]/g, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

describe('secret values in the encodings the server writes', () => {
  it('the .env line the server writes for a value with quotes, spaces, # and $ is redacted', () => {
    const redactor = redactorOf(WEIRD);
    const envText = withManagedBlock('USER_OWN=keep-me\n', new Map([['WEIRD', WEIRD]]));
    // The server's own encoding of the value (the case to catch).
    expect(envText).toContain(String.raw`WEIRD="pa ss#word \"q\" \$HOME 'x'"`);
    expect(redactor.redactText(envText)).toBe(`USER_OWN=keep-me\n${ENV_BLOCK_BEGIN}\nWEIRD="***"\n${ENV_BLOCK_END}\n`);
  });

  it('every value is redacted in its .env line, whatever quoting it gets', () => {
    const redactor = redactorOf(...Object.values(VALUES));
    for (const [name, value] of Object.entries(VALUES)) {
      const envText = withManagedBlock('', new Map([[name, value]]));
      const redacted = redactor.redactText(envText);
      expect(redacted, name).toMatch(new RegExp(`^${name}=(\\*\\*\\*|'\\*\\*\\*'|"\\*\\*\\*")$`, 'm'));
      expect(redacted.split('\n').filter((line) => line !== ENV_BLOCK_BEGIN && line !== ENV_BLOCK_END && line !== ''), name).toHaveLength(1);
    }
  });

  it('a value inside JSON text is redacted: JSON-escaped once or twice, non-ASCII as is or as \\uXXXX', () => {
    const redactor = redactorOf(...Object.values(VALUES));
    for (const [name, value] of Object.entries(VALUES)) {
      expect(redactor.redactText(JSON.stringify({ content: value })), name).toBe('{"content":"***"}');
      expect(redactor.redactText(asciiJson({ content: value })), name).toBe('{"content":"***"}');
      expect(redactor.redactText(JSON.stringify(JSON.stringify({ content: value }))), name).toBe(JSON.stringify('{"content":"***"}'));
      expect(redactor.redactText(asciiJson(asciiJson({ content: value }))), name).toBe(JSON.stringify('{"content":"***"}'));
    }
  });

  it('the .env line inside JSON text (a tool output or arguments quoting the file) is redacted', () => {
    const redactor = redactorOf(...Object.values(VALUES));
    const envText = withManagedBlock('USER_OWN=keep-me\n', new Map(Object.entries(VALUES)));
    const expected = redactor.redactText(envText);
    expect(redactor.redactText(JSON.stringify({ output: envText }))).toBe(JSON.stringify({ output: expected }));
    expect(redactor.redactText(asciiJson({ output: envText }))).toBe(JSON.stringify({ output: expected }));
    expect(redactor.redactText(JSON.stringify(JSON.stringify({ output: envText })))).toBe(JSON.stringify(JSON.stringify({ output: expected })));
    // Tool arguments kept as JSON text in an item, redacted with the rest of the object.
    const item = { type: 'tool_call', arguments: JSON.stringify({ path: '.env', content: envText }) };
    expect(redactor.redact(item)).toEqual({ type: 'tool_call', arguments: JSON.stringify({ path: '.env', content: expected }) });
  });

  it('an encoded value split across stream chunks is caught', () => {
    const redactor = redactorOf(WEIRD);
    const text = `cat says ${JSON.stringify({ line: `WEIRD="${WEIRD.replace(/["$\\]/g, (c) => `\\${c}`)}"` })} ok`;
    for (let cut = 0; cut <= text.length; cut++) {
      const first = redactor.redactStreamChunk(undefined, text.slice(0, cut));
      const second = redactor.redactStreamChunk(first.held, text.slice(cut));
      const whole = first.text + second.text + redactor.endStream(second.held);
      expect(whole, `cut at ${cut}`).toBe(redactor.redactText(text));
      expect(whole).not.toContain('pa ss#word');
    }
    expect(redactor.redactText(text)).toBe(`cat says {"line":"WEIRD=\\"***\\""} ok`);
  });

  it('a plain value keeps a single form: texts without it are returned as they are', () => {
    const redactor = redactorOf('plain-token-123');
    const text = 'nothing to hide here';
    expect(redactor.redactText(text)).toBe(text);
    expect(redactor.redactText(JSON.stringify({ a: 'plain-token-123' }))).toBe('{"a":"***"}');
  });
});

describe('long values', () => {
  /**
   * Every occurrence of every form hidden, overlapping ones included, and a run of hidden
   * positions that overlapping occurrences join given as one `***`: what the redactor does, done naively.
   */
  function naiveRedact(text: string, forms: string[]): string {
    let out = '';
    let runEnd = 0;
    for (let index = 0; index < text.length; index++) {
      const end = Math.max(0, ...forms.filter((form) => text.startsWith(form, index)).map((form) => index + form.length));
      if (end > 0 && index >= runEnd) out += '***';
      if (index >= runEnd && end === 0) out += text[index];
      runEnd = Math.max(runEnd, end);
    }
    return out;
  }

  it('a value of 65,536 characters with quotes, backslashes, $ and non-ASCII is redacted in all its forms', () => {
    let state = 99;
    const alphabet = [...`a"'ü\\$ #🔑xyz0123456789`];
    const big = Array.from({ length: 65_536 }, () => alphabet[(state = (state * 1103515245 + 12345) % 2147483648) % alphabet.length]).join('').slice(0, 65_536).replace(/[\uD800-\uDBFF]$/, 'x');
    const redactor = redactorOf(big, 'short-token-1');
    const envText = withManagedBlock('', new Map([['BIG', big], ['SHORT', 'short-token-1']]));
    expect(redactor.redactText(envText)).toBe(`${ENV_BLOCK_BEGIN}\nBIG="***"\nSHORT=***\n${ENV_BLOCK_END}\n`);
    expect(redactor.redactText(JSON.stringify({ big, short: 'short-token-1' }))).toBe('{"big":"***","short":"***"}');
    expect(redactor.redactText(asciiJson(asciiJson({ big })))).toBe(JSON.stringify('{"big":"***"}'));
    // Streamed in pieces of 1000 characters: never a piece of it out, and the whole redacted.
    const text = `before ${big} after`;
    let held: StreamHeld | undefined;
    let out = '';
    for (let start = 0; start < text.length; start += 1000) {
      const result = redactor.redactStreamChunk(held, text.slice(start, start + 1000));
      held = result.held;
      out += result.text;
      expect(out).not.toContain(big.slice(0, 50));
    }
    expect(out + redactor.endStream(held)).toBe('before *** after');
    // A piece of a file from inside it.
    const bytes = Buffer.from(envText);
    const at = bytes.indexOf('BIG="') + 5;
    expect(redactor.redactByteRange(bytes, at + 10, at + 2000).length).toBe(0);
    expect(Buffer.from(redactor.redactByteRange(bytes, 0, bytes.length)).toString()).toBe(redactor.redactText(envText));
  });

  it('long and short forms together are all found, overlapping ones joined into one run', () => {
    const long = 'L'.repeat(1500) + 'tail-secret';
    const values = [long, 'L'.repeat(1030), 'LLLL-x', 'tail-secret', 'x'.repeat(1100)];
    const redactor = redactorOf(...values);
    const random = (() => {
      let state = 7;
      return () => ((state = (state * 1103515245 + 12345) % 2147483648) / 2147483648);
    })();
    for (let round = 0; round < 60; round++) {
      let text = '';
      for (let part = 0; part < 6; part++) {
        const value = values[Math.floor(random() * values.length)] as string;
        const choice = random();
        if (choice < 0.4) text += value;
        else if (choice < 0.7) text += value.slice(Math.floor(random() * value.length));
        else text += 'Lx- '.slice(Math.floor(random() * 4));
      }
      expect(redactor.redactText(text)).toBe(naiveRedact(text, values));
    }
  });
});
