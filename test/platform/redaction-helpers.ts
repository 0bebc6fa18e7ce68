/** What the redaction tests share: a reproducible random source and a redactor holding given values. */
import { SecretRedactor } from '../../src/platform/secrets/secret-redactor.js';

/** A small seeded generator (mulberry32), so a failing case can be reproduced from its seed. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let value = Math.imul(state ^ (state >>> 15), 1 | state);
    value = (value + Math.imul(value ^ (value >>> 7), 61 | value)) ^ value;
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

/** A redactor that hides exactly `values`. */
export function redactorOf(...values: string[]): SecretRedactor {
  const redactor = new SecretRedactor();
  redactor.setValues(values);
  return redactor;
}
