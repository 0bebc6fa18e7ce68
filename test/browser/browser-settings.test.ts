/**
 * The `browser` section of `server.yaml` (docs/configuration.md): defaults, and mistakes named
 * by file, line and key path.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_BROWSER_IDLE_TIMEOUT_MS, ServerSettingsSchema } from '../../src/config/server-settings.js';
import { parseYamlFile } from '../../src/config/yaml-file.js';

const parse = (text: string) => parseYamlFile('/config/server.yaml', text, ServerSettingsSchema);
const problem = (text: string): string => {
  try {
    parse(text);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error(`server.yaml was accepted: ${text}`);
};

describe('server.yaml browser', () => {
  it('is off by default, with a 10-minute idle time and headless Debian Chromium', () => {
    expect(parse('{}\n').browser).toEqual({ enabled: false, idleTimeoutMs: DEFAULT_BROWSER_IDLE_TIMEOUT_MS, executablePath: '/usr/bin/chromium', headless: true });
    expect(parse('browser: { enabled: true }\n').browser).toMatchObject({ enabled: true, idleTimeoutMs: 600_000 });
  });

  it('names the file, line and key of a mistake', () => {
    expect(problem('limits: {}\nbrowser:\n  enabled: true\n  idleTimeoutMs: 10\n')).toMatch(/\/config\/server\.yaml:4: browser\.idleTimeoutMs: .*1000/);
    expect(problem('browser:\n  enabled: yes please\n')).toMatch(/\/config\/server\.yaml:2: browser\.enabled: /);
    expect(problem('browser:\n  executablePath: ""\n')).toContain('browser.executablePath: must not be empty');
    expect(problem('browser:\n  idleTimeout: 5000\n')).toMatch(/server\.yaml:2: browser.*idleTimeout/);
  });
});
