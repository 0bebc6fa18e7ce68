/**
 * The README's picture of the terminal UI: a screen captured from tmux (`capture-pane -p -e`,
 * with its SGR colour escapes) written as text to `docs/tui.txt` and rendered to
 * `docs/tui.png` by Chromium (playwright-core) as a monospace HTML page. Only when
 * `OPENVAALA_UPDATE_SCREENSHOTS=1`, so ordinary test runs leave the repository untouched.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { PACKAGE_ROOT } from '../../src/package-info.js';

const PALETTE: Record<number, string> = { 30: '#1e1e1e', 31: '#e5534b', 32: '#57ab5a', 33: '#c69026', 34: '#539bf5', 35: '#b083f0', 36: '#39c5cf', 37: '#d4d4d4', 90: '#7d8590' };
const FOREGROUND = '#d4d4d4';
const BACKGROUND = '#1e1e1e';

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Terminal text with SGR escapes (bold, dim, italic, underline, inverse, 8 colours and grey) as HTML spans. */
export function ansiToHtml(text: string): string {
  let bold = false;
  let dim = false;
  let italic = false;
  let underline = false;
  let inverse = false;
  let color: string | undefined;
  let html = '';
  // eslint-disable-next-line no-control-regex
  for (const part of text.split(/(\u001b\[[0-9;]*m)/)) {
    // eslint-disable-next-line no-control-regex
    const codes = /^\u001b\[([0-9;]*)m$/.exec(part);
    if (codes) {
      for (const code of (codes[1] || '0').split(';').map(Number)) {
        if (code === 0) [bold, dim, italic, underline, inverse, color] = [false, false, false, false, false, undefined];
        else if (code === 1) bold = true;
        else if (code === 2) dim = true;
        else if (code === 3) italic = true;
        else if (code === 4) underline = true;
        else if (code === 7) inverse = true;
        else if (code === 22) [bold, dim] = [false, false];
        else if (code === 23) italic = false;
        else if (code === 24) underline = false;
        else if (code === 27) inverse = false;
        else if (code === 39) color = undefined;
        else if (PALETTE[code]) color = PALETTE[code];
      }
      continue;
    }
    if (!part) continue;
    const foreground = color ?? FOREGROUND;
    const style = [
      `color:${inverse ? BACKGROUND : foreground}`,
      inverse ? `background:${foreground}` : '',
      bold ? 'font-weight:bold' : '',
      dim ? 'opacity:0.6' : '',
      italic ? 'font-style:italic' : '',
      underline ? 'text-decoration:underline' : '',
    ].filter(Boolean);
    html += `<span style="${style.join(';')}">${escapeHtml(part)}</span>`;
  }
  return html;
}

/**
 * Writes `docs/tui.txt` (plain text) and `docs/tui.png` from a captured screen, when
 * `OPENVAALA_UPDATE_SCREENSHOTS=1`; otherwise does nothing.
 */
export async function saveTerminalScreenshot(screenWithEscapes: string): Promise<void> {
  if (process.env.OPENVAALA_UPDATE_SCREENSHOTS !== '1') return;
  const docs = path.join(PACKAGE_ROOT, 'docs');
  // eslint-disable-next-line no-control-regex
  const plain = screenWithEscapes.replace(/\u001b\[[0-9;]*m/g, '').replace(/[ \t]+$/gm, '');
  writeFileSync(path.join(docs, 'tui.txt'), plain.replace(/\n+$/, '\n'));
  const page = `<!doctype html><meta charset="utf-8"><style>body{margin:0;background:${BACKGROUND}}pre{margin:0;padding:16px 20px;font:14px/1.35 "DejaVu Sans Mono","Liberation Mono",monospace;color:${FOREGROUND};display:inline-block}</style><pre>${ansiToHtml(screenWithEscapes.replace(/\n+$/, ''))}</pre>`;
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
  try {
    const tab = await browser.newPage({ deviceScaleFactor: 1 });
    await tab.setContent(page);
    await tab.locator('pre').screenshot({ path: path.join(docs, 'tui.png') });
  } finally {
    await browser.close();
  }
}
