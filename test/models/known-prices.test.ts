/**
 * The built-in list prices of well-known models (src/models/model-catalog.ts): the most specific
 * pattern wins, dated ids take their family's price, and unknown models have none.
 */
import { describe, expect, it } from 'vitest';
import { knownPrices } from '../../src/models/model-catalog.js';

describe('built-in model prices', () => {
  it('tells model generations apart whose ids share a start', () => {
    expect(knownPrices('claude-opus-4-1-20250805')).toMatchObject({ inputPerMillionUsd: 15, outputPerMillionUsd: 75 });
    expect(knownPrices('claude-opus-4-5-20251101')).toMatchObject({ inputPerMillionUsd: 5, outputPerMillionUsd: 25 });
    expect(knownPrices('gpt-5-mini-2025-08-07')).toMatchObject({ inputPerMillionUsd: 0.25, outputPerMillionUsd: 2 });
    expect(knownPrices('gpt-5-2025-08-07')).toMatchObject({ inputPerMillionUsd: 1.25, outputPerMillionUsd: 10 });
    expect(knownPrices('gemini-2.5-flash-lite')).toMatchObject({ inputPerMillionUsd: 0.1 });
    expect(knownPrices('gemini-2.5-flash')).toMatchObject({ inputPerMillionUsd: 0.3 });
  });

  it('has no price for a model it does not know, and hands out copies', () => {
    expect(knownPrices('my-local-model')).toBeUndefined();
    const prices = knownPrices('gpt-4o');
    if (prices) prices.inputPerMillionUsd = 0;
    expect(knownPrices('gpt-4o')?.inputPerMillionUsd).toBe(2.5);
  });
});
