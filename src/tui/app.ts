/**
 * The Ink root of the terminal UI: feeds keys to the screen state (`screen.ts`), follows the
 * terminal's size, ticks the spinner while work runs, and draws the screen's lines. React
 * elements are built with `createElement` so the module needs no JSX step.
 */
import { createElement as h, useEffect, useReducer } from 'react';
import { Box, render, Text, useApp, useInput, useStdout, type Instance } from 'ink';
import { PasteSeparatingInput } from './bracketed-paste.js';
import type { TuiScreen } from './screen.js';

/** Most redraws per second caused by streaming (each delta would otherwise redraw). */
const MAX_REDRAWS_PER_SECOND = 30;

/** Props of the root component. */
export interface AppProps {
  screen: TuiScreen;
}

/** The root component: the whole screen, redrawn when its state changes. */
export function App({ screen }: AppProps) {
  const [, redraw] = useReducer((count: number) => count + 1, 0);
  const { exit } = useApp();
  const { stdout } = useStdout();

  useEffect(() => {
    let timer: NodeJS.Timeout | undefined;
    screen.onChange(() => {
      if (screen.exitRequested) {
        exit();
        return;
      }
      timer ??= setTimeout(() => {
        timer = undefined;
        redraw();
      }, 1000 / MAX_REDRAWS_PER_SECOND);
    });
    const resize = () => {
      screen.size = { columns: stdout.columns || 80, rows: stdout.rows || 24 };
      redraw();
    };
    stdout.on('resize', resize);
    const spinner = setInterval(() => {
      if (!screen.controller.model.running) return;
      screen.spinnerFrame++;
      redraw();
    }, 120);
    return () => {
      stdout.off('resize', resize);
      clearInterval(spinner);
      if (timer) clearTimeout(timer);
    };
  }, [screen, stdout, exit]);

  useInput((input, key) => {
    screen.handleInput(input, key);
    if (screen.exitRequested) exit();
    else redraw();
  });

  screen.size = { columns: stdout.columns || 80, rows: stdout.rows || 24 };
  const lines = screen.frame();
  return h(
    Box,
    { flexDirection: 'column', width: screen.size.columns },
    lines.map((line, index) => h(Text, { key: index, wrap: 'truncate' }, line === '' ? ' ' : line)),
  );
}

/** The terminal streams the UI is drawn on and reads keys from. */
export interface TuiStreams {
  stdin: NodeJS.ReadStream;
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
}

/**
 * Draws the UI with Ink on `streams`. Ink reads the terminal through `PasteSeparatingInput`,
 * which gives the screen each bracketed paste whole however many reads it arrives in; the
 * terminal is read from Ink's raw mode on until it leaves it (when the instance unmounts).
 * @returns Ink's instance
 */
export function renderApp(screen: TuiScreen, streams: TuiStreams): Instance {
  const input = new PasteSeparatingInput(streams.stdin, (text) => screen.queuePaste(text));
  return render(h(App, { screen }), { stdin: input.stream, stdout: streams.stdout, stderr: streams.stderr, exitOnCtrlC: false, patchConsole: false });
}
