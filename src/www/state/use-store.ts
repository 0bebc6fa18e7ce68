/**
 * Preact hooks that re-render a component when a state object changes. Changes are coalesced
 * to one render per animation frame, so a replay of thousands of items renders once, not once
 * per item.
 */
import { useEffect, useState } from 'preact/hooks';

/** Anything with change listeners. */
export interface Observable {
  onChange(listener: () => void): () => void;
}

/** Re-renders the calling component (at most once a frame) whenever `store` changes. */
export function useStore(store: Observable | undefined): void {
  const [, setTick] = useState(0);
  useEffect(() => {
    if (!store) return undefined;
    let scheduled = false;
    let frame = 0;
    let timer = 0;
    const flush = () => {
      if (!scheduled) return;
      scheduled = false;
      cancelAnimationFrame(frame);
      clearTimeout(timer);
      setTick((tick) => tick + 1);
    };
    const remove = store.onChange(() => {
      if (scheduled) return;
      scheduled = true;
      // A frame when the tab is shown; the timer covers a tab hidden meanwhile, which gets no
      // frames, so its state (and title) stay current.
      frame = requestAnimationFrame(flush);
      timer = window.setTimeout(flush, 100);
    });
    // Changes between the render and this effect had no listener yet: render once more.
    setTick((tick) => tick + 1);
    return () => {
      remove();
      cancelAnimationFrame(frame);
      clearTimeout(timer);
    };
  }, [store]);
}
