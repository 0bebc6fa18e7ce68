import { describe, expect, it } from 'vitest';
import { ulid } from 'ulid';
import { CodexIdError, fromCodexId, toCodexId } from '../../src/protocol/codex-ids.js';
import { newId } from '../../src/ids.js';

describe('the Codex id rule', () => {
  it('writes the 128 bits of the ULID as a UUID', () => {
    // All ones and a known pattern: the largest ULID is the all-ones UUID.
    expect(toCodexId('conv_7zzzzzzzzzzzzzzzzzzzzzzzzz')).toBe('ffffffff-ffff-ffff-ffff-ffffffffffff');
    expect(toCodexId('turn_00000000000000000000000001')).toBe('00000000-0000-0000-0000-000000000001');
    expect(toCodexId('item_0000000000000000000000000z')).toBe('00000000-0000-0000-0000-00000000001f');
  });

  it('maps back losslessly, both ways', () => {
    for (const prefix of ['conv', 'sess', 'turn', 'item'] as const) {
      const id = newId(prefix);
      const uuid = toCodexId(id);
      expect(uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      expect(fromCodexId(uuid, prefix)).toBe(id);
    }
    const uuid = '0190f3a2-7c4e-7b1d-9e2a-3f4b5c6d7e8f';
    expect(toCodexId(fromCodexId(uuid, 'conv'))).toBe(uuid);
    expect(toCodexId(fromCodexId(uuid.toUpperCase(), 'conv'))).toBe(uuid);
  });

  it('keeps time order', () => {
    const earlier = `conv_${ulid(1_700_000_000_000).toLowerCase()}`;
    const later = `conv_${ulid(1_700_000_000_001).toLowerCase()}`;
    expect(toCodexId(earlier) < toCodexId(later)).toBe(true);
  });

  it('refuses what is not an id of the rule', () => {
    for (const id of ['conv_missing', 'conv_01ARZ3NDEKTSV4RRFFQ69G5FAV', '01arz3ndektsv4rrffq69g5fav', 'conv_81arz3ndektsv4rrffq69g5fav', 'appr_1']) {
      expect(() => toCodexId(id), id).toThrow(CodexIdError);
    }
    expect(() => fromCodexId('not-a-uuid', 'conv')).toThrow(CodexIdError);
  });
});
