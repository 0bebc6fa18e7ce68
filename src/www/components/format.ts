/** Small formatting rules of the UI: durations, token counts, money, times. */

/** A duration in ms as `850 ms`, `2.4 s` or `3 min 5 s`. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  return `${minutes} min ${Math.round((ms % 60_000) / 1000)} s`;
}

/** A token count as `950`, `12.3k` or `1.2M`. */
export function formatTokens(count: number): string {
  if (count < 1000) return String(count);
  if (count < 1_000_000) return `${(count / 1000).toFixed(count < 10_000 ? 1 : 0)}k`;
  return `${(count / 1_000_000).toFixed(1)}M`;
}

/** US dollars with enough digits for small costs. */
export function formatUsd(value: number): string {
  return `$${value < 0.1 ? value.toFixed(4) : value.toFixed(2)}`;
}

/** A time as the browser's local time of day, or the date when not today. */
export function formatTime(ms: number): string {
  const date = new Date(ms);
  const today = new Date();
  return date.toDateString() === today.toDateString() ? date.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' }) : date.toLocaleDateString();
}
