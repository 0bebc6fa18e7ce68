/** Dark and light themes: the system's choice unless the user picked one (remembered). */

/** A theme choice. */
export type Theme = 'system' | 'dark' | 'light';

/** The remembered choice. */
export function storedTheme(): Theme {
  const value = localStorage.getItem('openvaala.theme');
  return value === 'dark' || value === 'light' ? value : 'system';
}

/** Applies a choice to the document (`data-theme` on `<html>`), remembering it. */
export function setTheme(theme: Theme): void {
  if (theme === 'system') localStorage.removeItem('openvaala.theme');
  else localStorage.setItem('openvaala.theme', theme);
  applyTheme();
}

/** Applies the remembered choice (or the system's). */
export function applyTheme(): void {
  const theme = storedTheme();
  const dark = theme === 'dark' || (theme === 'system' && matchMedia('(prefers-color-scheme: dark)').matches);
  document.documentElement.dataset.theme = dark ? 'dark' : 'light';
  document.querySelector('meta[name="theme-color"]')?.setAttribute('content', dark ? '#0d1117' : '#ffffff');
}
