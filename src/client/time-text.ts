/**
 * How the command line and the terminal UI write a moment for a person: one notation
 * everywhere, whatever the machine's locale (`toLocaleString` gives `12/5/2026, 8:25:03 AM` in
 * one shell and `5.12.2026, 8.25.03` in the next, which scripts and people misread). A moment
 * is written in the machine's time zone as `YYYY-MM-DD HH:MM` (ISO 8601's order, 24-hour
 * clock), and an age as a rounded span (`40 s`, `12 min`, `3 h`, `2 days`).
 */

const pad = (value: number): string => String(value).padStart(2, '0');

/**
 * A moment in the local time zone: `2026-12-05 08:25`, or `2026-12-05 08:25:03` with seconds.
 * @param ms milliseconds since the Unix epoch
 */
export function localDateTime(ms: number, options: { seconds?: boolean } = {}): string {
  const date = new Date(ms);
  const minutes = `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())}`;
  return options.seconds ? `${minutes}:${pad(date.getSeconds())}` : minutes;
}

/**
 * The local time of day of a moment: `08:25:03`.
 * @param ms milliseconds since the Unix epoch
 */
export function localTimeOfDay(ms: number): string {
  const date = new Date(ms);
  return `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}

/**
 * A span, rounded to the unit that reads best: seconds below 2 minutes, minutes below 2
 * hours, hours below 2 days, then days (`40 s`, `12 min`, `3 h`, `2 days`). A negative span
 * (a clock moved back) reads as `0 s`.
 * @param ms the span in milliseconds
 */
export function describeSpan(ms: number): string {
  const seconds = Math.max(0, Math.round(ms / 1000));
  if (seconds < 120) return `${seconds} s`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 120) return `${minutes} min`;
  const hours = Math.round(minutes / 60);
  return hours < 48 ? `${hours} h` : `${Math.round(hours / 24)} days`;
}

/**
 * How long ago a moment was: `just now` within the last minute, else the span and `ago`
 * (`12 min ago`, see {@link describeSpan}).
 * @param ms milliseconds since the Unix epoch
 * @param now the present, ms since the epoch (the clock by default)
 */
export function timeAgo(ms: number, now: number = Date.now()): string {
  return now - ms < 60_000 ? 'just now' : `${describeSpan(now - ms)} ago`;
}
