/**
 * The request fields each provider kind gets for reasoning settings and a turn's effort
 * (the wire-level checks are in test/runtime/reasoning.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { reasoningProviderOptions } from '../../src/models/reasoning.js';

describe('reasoning provider options', () => {
  it('asks nothing of a model that does not reason, even for effort none', () => {
    for (const kind of ['openai', 'openai-compatible', 'anthropic', 'google'] as const) {
      expect(reasoningProviderOptions(kind, undefined)).toBeUndefined();
      expect(reasoningProviderOptions(kind, undefined, 'none')).toBeUndefined();
    }
  });

  it('uses the defaults for a reasoning model without settings', () => {
    expect(reasoningProviderOptions('openai', {})).toEqual({ openai: { forceReasoning: true, reasoningEffort: 'medium', reasoningSummary: 'auto', store: false, include: ['reasoning.encrypted_content'] } });
    expect(reasoningProviderOptions('anthropic', {})).toEqual({ anthropic: { thinking: { type: 'enabled', budgetTokens: 16_384 } } });
    expect(reasoningProviderOptions('google', {})).toEqual({ google: { thinkingConfig: { thinkingBudget: 16_384, includeThoughts: true } } });
    expect(reasoningProviderOptions('openai-compatible', {})).toEqual({ openaiCompatible: { reasoningEffort: 'medium' } });
  });

  it('turns reasoning off for effort none on a reasoning model', () => {
    expect(reasoningProviderOptions('openai', { effort: 'high' }, 'none')).toEqual({ openai: { reasoningEffort: 'none' } });
    expect(reasoningProviderOptions('anthropic', { budgetTokens: 9000 }, 'none')).toBeUndefined();
    expect(reasoningProviderOptions('google', {}, 'none')).toEqual({ google: { thinkingConfig: { thinkingBudget: 0, includeThoughts: false } } });
  });

  it('keeps a configured budget for the configured effort, and leaves out summaries when asked', () => {
    expect(reasoningProviderOptions('anthropic', { budgetTokens: 9000 })).toEqual({ anthropic: { thinking: { type: 'enabled', budgetTokens: 9000 } } });
    expect(reasoningProviderOptions('anthropic', { budgetTokens: 9000 }, 'high')).toEqual({ anthropic: { thinking: { type: 'enabled', budgetTokens: 32_768 } } });
    expect(reasoningProviderOptions('google', { summary: 'none', effort: 'low' })).toEqual({ google: { thinkingConfig: { thinkingBudget: 4096, includeThoughts: false } } });
    expect(reasoningProviderOptions('openai', { summary: 'none' })?.openai).not.toHaveProperty('reasoningSummary');
  });
});
