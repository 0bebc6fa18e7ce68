/**
 * Reading a file in pieces gets no piece of a secret value (docs/platform.md, "Secrets"): a
 * piece is redacted with the bytes around it, so a value cut by the piece's edges is still
 * found, and is given as `***` by the piece holding its first byte. Offsets and lengths stay
 * the file's bytes, so pieces read one after the other concatenate to the redacted file. Over
 * the protocol, a plain project member reading the workspace `.env` with `fs/read`, whole or
 * in pieces, sees values only as `***`.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { withManagedBlock } from '../../src/platform/secrets/env-file.js';
import { SecretRedactor } from '../../src/platform/secrets/secret-redactor.js';
import { redactorOf, seededRandom } from './redaction-helpers.js';
import { startPlatformServer, type PlatformHarness } from './two-users.js';

const TOKEN = 'supersecret123';
const WEIRD = `pa ss#word "q" $HOME 'x'`;
const SECRETS = new Map([
  ['TOKEN', TOKEN],
  ['WEIRD', WEIRD],
]);


/** Bytes [offset, offset + length) of `file` redacted as `fs/read` does: from a window holding only the context the redactor asks for. */
function piece(redactor: SecretRedactor, file: Uint8Array, offset: number, length: number): string {
  const context = redactor.rangeContextBytes;
  const start = Math.max(0, offset - context);
  const window = file.subarray(start, Math.min(file.length, offset + length + context));
  return Buffer.from(redactor.redactByteRange(window, offset - start, offset - start + length)).toString('latin1');
}

/** The pieces of `file` cut at `cuts`, each redacted on its own. */
function pieces(redactor: SecretRedactor, file: Uint8Array, cuts: number[]): string[] {
  const sorted = [...new Set([0, ...cuts, file.length])].sort((a, b) => a - b);
  return sorted.slice(1).map((end, index) => piece(redactor, file, sorted[index] as number, end - (sorted[index] as number)));
}

/** Every piece of a value of at least 4 characters that `allowed` (the file's text outside the values) does not hold. */
function leakedFragments(text: string, values: string[], allowed: string): string[] {
  const found: string[] = [];
  for (const value of values) {
    for (let start = 0; start < value.length; start++) {
      for (let end = start + 4; end <= value.length; end++) {
        const fragment = value.slice(start, end);
        if (text.includes(fragment) && !allowed.includes(fragment)) found.push(fragment);
      }
    }
  }
  return found;
}

describe('SecretRedactor.redactByteRange', () => {
  const envText = withManagedBlock('USER_OWN=keep-me\n', SECRETS);
  const file = Buffer.from(envText);
  const redactor = redactorOf(TOKEN, WEIRD);
  const redactedWhole = () => piece(redactor, file, 0, file.length);

  it('the whole file is redacted, values and their .env encoding alike', () => {
    const whole = redactedWhole();
    const outside = whole.replaceAll('***', '');
    expect(whole).toContain('TOKEN=***\n');
    expect(whole).toContain('WEIRD="***"\n');
    expect(leakedFragments(whole, [TOKEN, WEIRD], outside)).toEqual([]);
  });

  it('no piece of any length at any offset shows part of a value (10 bytes from inside TOKEN gave "persecret1")', () => {
    const whole = redactedWhole();
    const outside = whole.replaceAll('***', '');
    const at = envText.indexOf(TOKEN);
    // The piece of the report: it starts 2 bytes into the value.
    expect(Buffer.from(envText).subarray(at + 2, at + 12).toString()).toBe('persecret1');
    expect(piece(redactor, file, at + 2, 10)).toBe('');
    for (let length = 1; length <= 40; length++) {
      for (let offset = 0; offset + length <= file.length; offset++) {
        const shown = piece(redactor, file, offset, length);
        expect(leakedFragments(shown, [TOKEN, WEIRD], outside), `offset ${offset}, length ${length}`).toEqual([]);
        // A piece is always a part of the redacted file.
        if (!whole.includes(shown)) expect(shown, `offset ${offset}, length ${length}`).toBe(whole);
      }
    }
  });

  it('pieces read one after the other concatenate to the redacted file, the value given by the piece holding its first byte', () => {
    const whole = redactedWhole();
    const at = envText.indexOf(TOKEN);
    expect(pieces(redactor, file, [at + 3])).toEqual([whole.slice(0, whole.indexOf('TOKEN=***') + 'TOKEN='.length) + '***', whole.slice(whole.indexOf('TOKEN=***') + 'TOKEN=***'.length)]);
    for (let size = 1; size <= 30; size++) {
      const cuts = Array.from({ length: Math.ceil(file.length / size) }, (_, index) => index * size);
      expect(pieces(redactor, file, cuts).join(''), `pieces of ${size}`).toBe(whole);
    }
  });

  it('holds for seeded random texts, overlapping and repeated values, and random cuts', () => {
    const values = ['tok_ABCD123', 'aaaaab', 'ab_tok', 'xxxxxx', 'ünï-🔑x', 'q"uo\\te'];
    const redactor = redactorOf(...values);
    const random = seededRandom(20261201);
    const alphabet = ['a', 'b', '_', 't', 'o', 'k', 'x', 'ü', '🔑', '"', '\\', ' ', '\n'];
    for (let round = 0; round < 300; round++) {
      let text = '';
      for (let part = 1 + Math.floor(random() * 10); part > 0; part--) {
        const choice = random();
        const value = values[Math.floor(random() * values.length)] as string;
        if (choice < 0.3) text += value;
        else if (choice < 0.4) text += JSON.stringify(value).slice(1, -1);
        else if (choice < 0.6) text += value.slice(Math.floor(random() * value.length));
        else for (let count = Math.floor(random() * 12); count > 0; count--) text += alphabet[Math.floor(random() * alphabet.length)];
      }
      const bytes = Buffer.from(text);
      const redacted = piece(redactor, bytes, 0, bytes.length);
      for (const value of values) expect(Buffer.from(redacted, 'latin1').toString()).not.toContain(value);
      for (let chunking = 0; chunking < 8; chunking++) {
        const cuts = Array.from({ length: Math.floor(random() * 8) }, () => Math.floor(random() * (bytes.length + 1)));
        const got = pieces(redactor, bytes, cuts).join('');
        if (got !== redacted) expect(got, `text ${JSON.stringify(text)}, cuts ${JSON.stringify(cuts)}`).toBe(redacted);
      }
    }
  });

  it('redacts a value in a file that is not UTF-8 text, byte for byte', () => {
    const binary = Buffer.concat([Buffer.from([0xff, 0xfe, 0x00]), Buffer.from(`k=${TOKEN};`), Buffer.from([0x80, 0x81])]);
    const redacted = Buffer.from(piece(redactor, binary, 0, binary.length), 'latin1');
    expect(redacted).toEqual(Buffer.concat([Buffer.from([0xff, 0xfe, 0x00]), Buffer.from('k=***;'), Buffer.from([0x80, 0x81])]));
    expect(Buffer.from(piece(redactor, binary, 8, 4), 'latin1').length).toBe(0);
  });

  it('with no values, a range is the bytes themselves', () => {
    const none = new SecretRedactor();
    expect(none.rangeContextBytes).toBe(0);
    expect(Buffer.from(none.redactByteRange(file, 5, 15)).toString()).toBe(envText.slice(5, 15));
  });
});

describe('fs/read by a project member', () => {
  let harness: PlatformHarness | undefined;
  afterEach(async () => {
    await harness?.stop();
    harness = undefined;
  });

  it('shows every secret as ***, whole or in pieces of any size, .env encoding and binary files included', async () => {
    harness = await startPlatformServer('responses: []\n');
    const owner = await harness.connect();
    const workspace = harness.directory('ranged');
    writeFileSync(path.join(workspace, '.env'), 'USER_OWN=keep-me\n');
    writeFileSync(path.join(workspace, 'blob.bin'), Buffer.concat([Buffer.from([0xff, 0x00]), Buffer.from(`token ${TOKEN} end`)]));
    const { project } = await owner.client.request('projects/create', { name: 'Ranged', workspace: { executor: 'local', directory: workspace } });
    for (const [name, value] of SECRETS) await owner.client.request('projects/secrets/set', { projectId: project.id, name, value });
    await owner.client.request('projects/members/add', { projectId: project.id, userId: 'alice' });
    const alice = await harness.connect('alice');
    const { conversation } = await alice.client.request('conversation/create', { projectId: project.id });
    const read = (params: { path: string; offset?: number; length?: number }) => alice.client.request('fs/read', { conversationId: conversation.id, ...params });

    const whole = await read({ path: '.env' });
    expect(whole.encoding).toBe('utf8');
    expect(whole.content).toContain('TOKEN=***\n');
    expect(whole.content).toContain('WEIRD="***"\n');
    const outside = whole.content.replaceAll('***', '');
    expect(leakedFragments(whole.content, [TOKEN, WEIRD], outside)).toEqual([]);

    // The report's read: 10 bytes from 2 bytes into the value.
    const at = (whole.content.indexOf('TOKEN=***') + 'TOKEN='.length);
    const split = await read({ path: '.env', offset: at + 2, length: 10 });
    expect(split).toMatchObject({ offset: at + 2, length: 10, size: whole.size });
    expect(split.content).not.toContain('persecret1');
    for (const size of [1, 3, 7, 10, 16]) {
      let assembled = '';
      for (let offset = 0; offset < whole.size; ) {
        const next = await read({ path: '.env', offset, length: size });
        expect(leakedFragments(next.content, [TOKEN, WEIRD], outside), `offset ${offset}, length ${size}`).toEqual([]);
        assembled += next.content;
        offset += next.length;
      }
      expect(assembled, `pieces of ${size}`).toBe(whole.content);
    }

    const blob = await read({ path: 'blob.bin' });
    expect(blob.encoding).toBe('base64');
    expect(Buffer.from(blob.content, 'base64')).toEqual(Buffer.concat([Buffer.from([0xff, 0x00]), Buffer.from('token *** end')]));
  });
});
