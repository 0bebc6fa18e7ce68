/** The mock provider script's `reasoningParts`: refused together with `reasoning` or `reasoningDeltas`. */
import { describe, expect, it } from 'vitest';
import { parseMockScript } from '../../src/models/mock/index.js';

describe('mock script reasoningParts', () => {
  it.each(['reasoning: "one"', 'reasoningDeltas: ["one"]'])('is refused next to %s, naming the key', (other) => {
    expect(() => parseMockScript(`responses:\n  - reasoningParts: ["a", "b"]\n    ${other}\n    text: "x"\n`, 'script.yaml')).toThrow(
      'script.yaml: responses[0].reasoningParts: use either reasoningParts or reasoning/reasoningDeltas, not both',
    );
  });

  it('is refused empty, naming the key', () => {
    expect(() => parseMockScript('responses:\n  - reasoningParts: []\n    text: "x"\n', 'script.yaml')).toThrow(/script\.yaml: responses\[0\]\.reasoningParts: /);
  });
});
