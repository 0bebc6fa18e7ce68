/**
 * A terminal on the conversation's executor: xterm.js over `terminal/create`, `terminal/input`,
 * `terminal/resize` and `terminal/output` (docs/protocol.md, "Terminals"). The terminal belongs
 * to this connection: after a reconnect it is gone and a new one can be opened.
 */
import { FitAddon } from '@xterm/addon-fit';
import { Terminal } from '@xterm/xterm';
import '@xterm/xterm/css/xterm.css';
import { useEffect, useRef, useState } from 'preact/hooks';
import { useApp } from '../state/app-state.js';

/** The terminal drawer of a conversation. */
export function TerminalDrawer({ conversationId }: { conversationId: string }) {
  const app = useApp();
  const host = useRef<HTMLDivElement>(null);
  const [status, setStatus] = useState('starting…');
  const [generation, setGeneration] = useState(0);

  useEffect(() => {
    const element = host.current;
    if (!element) return undefined;
    const dark = document.documentElement.dataset.theme !== 'light';
    const terminal = new Terminal({ fontSize: 13, convertEol: false, cursorBlink: true, theme: dark ? { background: '#0d1117', foreground: '#e6edf3' } : { background: '#ffffff', foreground: '#1f2328', cursor: '#1f2328' } });
    const fit = new FitAddon();
    terminal.loadAddon(fit);
    terminal.open(element);
    fit.fit();
    let terminalId: string | undefined;
    let closed = false;
    const removeListener = app.client.onNotification((event) => {
      if (event.method !== 'terminal/output' || event.params.terminalId !== terminalId) return;
      if (event.params.data) terminal.write(event.params.data);
      if (event.params.exited) setStatus(`exited${event.params.exitCode !== undefined && event.params.exitCode !== null ? ` with ${event.params.exitCode}` : ''}${event.params.signal ? ` (${event.params.signal})` : ''}`);
    });
    const removeStatus = app.client.onStatus((status) => {
      if (status !== 'open' && terminalId) setStatus('disconnected: the terminal ended with the connection');
    });
    app.client.request('terminal/create', { conversationId, cols: Math.max(20, terminal.cols), rows: Math.max(5, terminal.rows) }).then(
      (result) => {
        if (closed) {
          void app.client.request('terminal/close', { terminalId: result.terminalId }).catch(() => undefined);
          return;
        }
        terminalId = result.terminalId;
        setStatus('running');
        terminal.focus();
      },
      (error: unknown) => setStatus(`could not open: ${error instanceof Error ? error.message : String(error)}`),
    );
    const input = terminal.onData((data) => {
      if (terminalId) void app.client.request('terminal/input', { terminalId, data }).catch(() => undefined);
    });
    const observer = new ResizeObserver(() => {
      fit.fit();
      if (terminalId) void app.client.request('terminal/resize', { terminalId, cols: terminal.cols, rows: terminal.rows }).catch(() => undefined);
    });
    observer.observe(element);
    return () => {
      closed = true;
      observer.disconnect();
      input.dispose();
      removeListener();
      removeStatus();
      if (terminalId) void app.client.request('terminal/close', { terminalId }).catch(() => undefined);
      terminal.dispose();
    };
  }, [conversationId, generation]);

  return (
    <div class="terminal-drawer">
      <div class="muted terminal-status" role="status">
        Terminal: {status}{' '}
        <button type="button" class="secondary small" onClick={() => setGeneration(generation + 1)}>
          New terminal
        </button>
      </div>
      <div class="terminal-host" ref={host} aria-label="Terminal" />
    </div>
  );
}
