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
    const remove = store.onChange(() => {
      if (scheduled) return;
      scheduled = true;
      const flush = () => {
        scheduled = false;
        setTick((tick) => tick + 1);
      };
      // Hidden tabs get no animation frames; a timer keeps their state (and title) current.
      frame = document.hidden ? window.setTimeout(flush, 100) : requestAnimationFrame(flush);
    });
    return () => {
      remove();
      cancelAnimationFrame(frame);
      clearTimeout(frame);
    };
  }, [store]);
}
