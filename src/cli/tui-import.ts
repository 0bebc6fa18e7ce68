/**
 * How the `openvaala` and `openvaala tui` commands load the terminal UI (`src/tui`, Ink and
 * React): only when they run, and interactive in a terminal.
 */
/**
 * Imports the terminal UI so that Ink draws every frame in a terminal. Ink reads the `CI`
 * (and `CONTINUOUS_INTEGRATION`) variable once, when it is loaded, and then draws only the
 * last frame; a terminal UI running in a terminal is interactive whatever the shell exported
 * (a developer's shell, or a CI job driving it in tmux). The variables are restored at once,
 * so what this process starts (the server, its commands) still sees them.
 */
export async function importInteractiveTui(): Promise<typeof import('../tui/index.js')> {
  const names = ['CI', 'CONTINUOUS_INTEGRATION'] as const;
  const saved = names.map((name) => process.env[name]);
  if (process.stdout.isTTY) for (const name of names) delete process.env[name];
  try {
    return await import('../tui/index.js');
  } finally {
    names.forEach((name, index) => {
      const value = saved[index];
      if (value !== undefined) process.env[name] = value;
    });
  }
}
