/**
 * `/help` of the terminal UI: every command and key is listed, and no line is wider than a
 * classic 80-column terminal (a wrapped line used to split key names in two).
 */
import { expect, it } from 'vitest';
import { helpText, SLASH_COMMANDS } from '../../src/tui/commands.js';

it('lists every command and the keys, each line within 80 columns', () => {
  const lines = helpText().split('\n');
  for (const command of SLASH_COMMANDS) expect(lines.some((line) => line.startsWith(`  /${command.name}`)), command.name).toBe(true);
  for (const key of ['Enter', 'Ctrl+S', 'Esc', 'Ctrl+J, Alt+Enter', 'Tab', 'Ctrl+R', 'Ctrl+O', 'Ctrl+C']) expect(lines.some((line) => line.trimStart().startsWith(`${key} `)), key).toBe(true);
  const wide = lines.filter((line) => [...line].length > 80);
  expect(wide).toEqual([]);
});
