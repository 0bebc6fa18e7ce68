/**
 * `browser/state`, `browser/screenshot`, `browser/input` and `browser/stop` (docs/protocol.md,
 * "The agent's browser"): what a conversation's browser shows and a person's take-over, through
 * DevTools commands (Chrome DevTools Protocol: `Page.captureScreenshot`, `Page.navigate`,
 * `Input.dispatchMouseEvent`, `Input.insertText`, `Input.dispatchKeyEvent`) on the page the
 * browser shows.
 */
import { ErrorCodes, RpcError, type BrowserInputAction, type BrowserState, type MethodParams, type MethodResult } from '../../protocol/index.js';
import { browserServiceOf, type ProjectBrowser } from '../browser/browser-service.js';
import { withPage, type PageTarget } from '../browser/devtools-connection.js';
import type { RpcConnection } from '../rpc-connection.js';

type BrowserMethod = 'browser/state' | 'browser/screenshot' | 'browser/input' | 'browser/stop';
/** The handlers of the agent's browser, bound to one connection. */
export type BrowserHandlers = { [M in BrowserMethod]: (params: MethodParams<M>) => Promise<MethodResult<M>> };

/** How long `browser/input` `navigate` waits for the page to load, ms. */
const NAVIGATION_WAIT_MS = 10_000;
/** How often the load state is asked while waiting, ms. */
const NAVIGATION_POLL_MS = 100;

/** DevTools key event fields of the named keys (`windowsVirtualKeyCode` as Chromium expects; `text` for keys that insert). */
const KEY_EVENTS: Record<Extract<BrowserInputAction, { kind: 'key' }>['key'], { key: string; code: string; keyCode: number; text?: string }> = {
  Enter: { key: 'Enter', code: 'Enter', keyCode: 13, text: '\r' },
  Tab: { key: 'Tab', code: 'Tab', keyCode: 9 },
  Escape: { key: 'Escape', code: 'Escape', keyCode: 27 },
  Backspace: { key: 'Backspace', code: 'Backspace', keyCode: 8 },
  Delete: { key: 'Delete', code: 'Delete', keyCode: 46 },
  ArrowUp: { key: 'ArrowUp', code: 'ArrowUp', keyCode: 38 },
  ArrowDown: { key: 'ArrowDown', code: 'ArrowDown', keyCode: 40 },
  ArrowLeft: { key: 'ArrowLeft', code: 'ArrowLeft', keyCode: 37 },
  ArrowRight: { key: 'ArrowRight', code: 'ArrowRight', keyCode: 39 },
  Home: { key: 'Home', code: 'Home', keyCode: 36 },
  End: { key: 'End', code: 'End', keyCode: 35 },
  PageUp: { key: 'PageUp', code: 'PageUp', keyCode: 33 },
  PageDown: { key: 'PageDown', code: 'PageDown', keyCode: 34 },
  Space: { key: ' ', code: 'Space', keyCode: 32, text: ' ' },
};

type Send = (method: string, params?: Record<string, unknown>) => Promise<Record<string, unknown>>;

/** A JavaScript value of the page (`Runtime.evaluate` by value). */
async function evaluate(send: Send, expression: string): Promise<unknown> {
  const answer = (await send('Runtime.evaluate', { expression, returnByValue: true })) as { result?: { value?: unknown } };
  return answer.result?.value;
}

/** The URL and title of the page, read from the page itself (the target list lags behind navigations). */
async function pageLocation(send: Send): Promise<{ url: string; title: string }> {
  const value = (await evaluate(send, '({ url: location.href, title: document.title })')) as { url?: string; title?: string } | undefined;
  return { url: value?.url ?? '', title: value?.title ?? '' };
}

/** Runs one take-over action on the page. */
async function dispatch(send: Send, action: BrowserInputAction): Promise<void> {
  switch (action.kind) {
    case 'navigate': {
      const answer = (await send('Page.navigate', { url: action.url })) as { errorText?: string };
      if (answer.errorText) throw new RpcError(ErrorCodes.invalidParams, `browser/input: params.action.url: the browser could not load ${action.url} (${answer.errorText})`);
      const deadline = Date.now() + NAVIGATION_WAIT_MS;
      while (Date.now() < deadline && (await evaluate(send, 'document.readyState').catch(() => 'loading')) !== 'complete') {
        await new Promise((resolve) => setTimeout(resolve, NAVIGATION_POLL_MS));
      }
      return;
    }
    case 'click':
      for (const type of ['mousePressed', 'mouseReleased']) await send('Input.dispatchMouseEvent', { type, x: action.x, y: action.y, button: 'left', clickCount: 1 });
      return;
    case 'type':
      await send('Input.insertText', { text: action.text });
      return;
    case 'key': {
      const { key, code, keyCode, text } = KEY_EVENTS[action.key];
      await send('Input.dispatchKeyEvent', { type: 'keyDown', key, code, windowsVirtualKeyCode: keyCode, ...(text ? { text } : {}) });
      await send('Input.dispatchKeyEvent', { type: 'keyUp', key, code, windowsVirtualKeyCode: keyCode });
    }
  }
}

/** Builds the handlers of the agent's browser. */
export function createBrowserHandlers(connection: RpcConnection): BrowserHandlers {
  /**
   * The browser of the conversation's working directory, or undefined when it is not offered.
   * @throws RpcError notFound for an unknown conversation
   */
  const browserOf = async (conversationId: string): Promise<ProjectBrowser | undefined> => {
    const conversation = await connection.runtime.getConversation(conversationId);
    const service = browserServiceOf(connection.runtime);
    const workspace = conversation.workspaces[0];
    const sandboxed = (workspace.executor as { sandbox?: unknown }).sandbox !== undefined;
    if (service === undefined || service.mcpServersFor(workspace.root, workspace.executor.kind, sandboxed).length === 0) return undefined;
    return service.browserFor(workspace.root);
  };
  const offered = async (method: string, conversationId: string): Promise<ProjectBrowser> => {
    const browser = await browserOf(conversationId);
    if (browser === undefined) {
      throw RpcError.conflict(`${method}: conversation ${conversationId} is not offered the agent's browser (server.yaml browser.enabled is off, or the conversation works on another executor than "local" or in a sandbox)`, 'browser_disabled');
    }
    return browser;
  };
  const state = async (browser: ProjectBrowser, page?: PageTarget): Promise<BrowserState> => {
    if (!browser.running) return { enabled: true, running: false, profileDirectory: browser.profileDirectory };
    const shown = page ?? (await browser.currentPage());
    const location = await withPage(shown, pageLocation);
    return { enabled: true, running: true, ...location, profileDirectory: browser.profileDirectory };
  };
  return {
    async 'browser/state'({ conversationId }) {
      const browser = await browserOf(conversationId);
      return browser === undefined ? { enabled: false, running: false } : state(browser);
    },

    async 'browser/screenshot'({ conversationId }) {
      const browser = await offered('browser/screenshot', conversationId);
      if (!browser.running) throw RpcError.conflict(`browser/screenshot: the browser of conversation ${conversationId} is not running (browser/input starts it)`, 'browser_not_running');
      browser.touch();
      return withPage(await browser.currentPage(), async (send) => {
        const metrics = (await send('Page.getLayoutMetrics')) as { cssVisualViewport?: { clientWidth: number; clientHeight: number } };
        const shot = (await send('Page.captureScreenshot', { format: 'png' })) as { data: string };
        return { mediaType: 'image/png' as const, data: shot.data, width: metrics.cssVisualViewport?.clientWidth ?? 0, height: metrics.cssVisualViewport?.clientHeight ?? 0, ...(await pageLocation(send)) };
      });
    },

    async 'browser/input'({ conversationId, action }) {
      const browser = await offered('browser/input', conversationId);
      await browser.ensureRunning();
      const page = await browser.currentPage();
      await withPage(page, (send) => dispatch(send, action));
      browser.touch();
      return state(browser, page);
    },

    async 'browser/stop'({ conversationId }) {
      const browser = await offered('browser/stop', conversationId);
      return { stopped: await browser.stop('request') };
    },
  };
}
