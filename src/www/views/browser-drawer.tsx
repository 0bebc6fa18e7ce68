/**
 * The agent's browser: what it shows (a screenshot from `browser/screenshot`, refreshed while
 * the drawer is open, with the page's URL and title) and a person's take-over through
 * `browser/input` — an address bar, clicks on the screenshot (sent at the same point of the
 * page), typed text and a few keys — and `browser/stop`. A screenshot keeps the browser from
 * idling out, so it is only asked for while this drawer is open.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { BrowserInputAction, BrowserState } from '../../protocol/browser.js';
import { useApp } from '../state/app-state.js';
import { LatestRequest } from '../state/latest-request.js';

/** Time between two screenshots while the browser runs, ms. */
const REFRESH_MS = 1_000;
/** Time between two looks at a stopped browser (the agent may start it), ms. */
const STOPPED_REFRESH_MS = 3_000;

interface Shot {
  src: string;
  width: number;
  height: number;
}

function message(failure: unknown): string {
  return failure instanceof Error ? failure.message : String(failure);
}

/** The browser drawer of a conversation. */
export function BrowserDrawer({ conversationId }: { conversationId: string }) {
  const app = useApp();
  const [state, setState] = useState<BrowserState | undefined>();
  const [shot, setShot] = useState<Shot | undefined>();
  // Kept apart: the refresh, every second, clears its own error when it succeeds, and must not
  // clear the reason the person's last action was refused before it could be read.
  const [refreshError, setRefreshError] = useState<string | undefined>();
  const [actionError, setActionError] = useState<string | undefined>();
  const error = actionError ?? refreshError;
  const [address, setAddress] = useState('');
  const [text, setText] = useState('');
  const [busy, setBusy] = useState(false);
  // The latest URL typed over by the person is kept; the shown page's URL fills it otherwise.
  const editingAddress = useRef(false);
  // The person's actions can overlap (a click still loading when an address is sent): the
  // outcome of the last one started is what the drawer shows.
  const actions = useRef(new LatestRequest()).current;

  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    // While the browser runs, one screenshot a refresh is enough (it carries the URL and title);
    // its state is asked for only when it is not running, or a screenshot failed.
    let running = false;
    const showScreenshot = async (): Promise<boolean> => {
      const picture = await app.client.request('browser/screenshot', { conversationId });
      if (stopped) return false;
      setShot({ src: `data:${picture.mediaType};base64,${picture.data}`, width: picture.width, height: picture.height });
      setState((previous) => (previous ? { ...previous, running: true, url: picture.url, title: picture.title } : previous));
      if (!editingAddress.current) setAddress(picture.url);
      return true;
    };
    const refresh = async () => {
      try {
        if (!(running && (await showScreenshot().catch(() => false)))) {
          if (stopped) return;
          const current = await app.client.request('browser/state', { conversationId });
          if (stopped) return;
          setState(current);
          running = current.running;
          if (running) await showScreenshot();
          else setShot(undefined);
        }
        if (stopped) return;
        setRefreshError(undefined);
        timer = setTimeout(() => void refresh(), running ? REFRESH_MS : STOPPED_REFRESH_MS);
      } catch (failure) {
        if (stopped) return;
        running = false;
        setRefreshError(message(failure));
        timer = setTimeout(() => void refresh(), STOPPED_REFRESH_MS);
      }
    };
    void refresh();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [conversationId]);

  const act = (action: BrowserInputAction) => {
    setBusy(true);
    return actions.run(() => app.client.request('browser/input', { conversationId, action }), {
      onAnswer: (next) => {
        setState(next);
        setActionError(undefined);
      },
      onFailure: (failure) => setActionError(message(failure)),
      onSettled: () => setBusy(false),
    });
  };
  const stop = () =>
    actions.run(() => app.client.request('browser/stop', { conversationId }), {
      onAnswer: () => {
        setActionError(undefined);
        setState((current) => (current ? { ...current, running: false } : current));
        setShot(undefined);
      },
      onFailure: (failure) => setActionError(message(failure)),
      onSettled: () => setBusy(false),
    });
  const clickAt = (event: MouseEvent) => {
    const image = event.currentTarget as HTMLImageElement;
    if (!shot || image.clientWidth === 0) return;
    const scale = shot.width / image.clientWidth;
    void act({ kind: 'click', x: Math.round(event.offsetX * scale), y: Math.round(event.offsetY * scale) });
  };

  if (state && !state.enabled) {
    return <p class="muted">This conversation has no browser: it is offered when server.yaml sets browser.enabled, to conversations working on the local executor.</p>;
  }
  return (
    <div class="browser-drawer">
      <form
        class="browser-address"
        onSubmit={(event) => {
          event.preventDefault();
          editingAddress.current = false;
          void act({ kind: 'navigate', url: address.trim() });
        }}
      >
        <input
          type="text"
          aria-label="Address"
          placeholder="https://…"
          value={address}
          onInput={(event) => {
            editingAddress.current = true;
            setAddress((event.currentTarget as HTMLInputElement).value);
          }}
        />
        <button type="submit" class="secondary small" disabled={busy || address.trim() === ''}>
          Go
        </button>
        <button type="button" class="secondary small" disabled={!state?.running} onClick={() => void stop()}>
          Stop
        </button>
      </form>
      {error ? (
        <p class="error-text" role="alert">
          {error}
        </p>
      ) : null}
      {!state ? <p class="muted">Loading…</p> : null}
      {state && !state.running ? <p class="muted">The browser is stopped. It starts when the agent uses it, or when you open an address.</p> : null}
      {state?.running ? (
        <p class="browser-page" aria-label="Page">
          <strong>{state.title || 'Untitled'}</strong> <span class="muted">{state.url}</span>
        </p>
      ) : null}
      {shot ? <img class="browser-screen" src={shot.src} width={shot.width} height={shot.height} alt={`Page shown by the browser: ${state?.title ?? ''}`} onClick={clickAt} /> : null}
      {state?.running ? (
        <form
          class="browser-type"
          onSubmit={(event) => {
            event.preventDefault();
            if (text === '') return;
            void act({ kind: 'type', text }).then(() => setText(''));
          }}
        >
          <input type="text" aria-label="Text to type" placeholder="Click the page, then type here" value={text} onInput={(event) => setText((event.currentTarget as HTMLInputElement).value)} />
          <button type="submit" class="secondary small" disabled={busy || text === ''}>
            Type
          </button>
          {(['Enter', 'Tab', 'Backspace', 'Escape'] as const).map((key) => (
            <button key={key} type="button" class="secondary small" disabled={busy} onClick={() => void act({ kind: 'key', key })}>
              {key}
            </button>
          ))}
        </form>
      ) : null}
    </div>
  );
}
