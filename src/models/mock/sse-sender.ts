/**
 * The SSE side of the mock provider: framing events, and the send loop that paces deltas,
 * passes holds, breaks or malforms the stream where the script says. Kept apart from the HTTP
 * server, which only routes requests and owns the gates this loop waits at.
 */
import { once } from 'node:events';
import type { ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { MockHold, ServerSentEvent } from './script.js';

/** How {@link sendEvents} sends one stream. */
export interface SendEventsOptions {
  /** Milliseconds to wait before each delta. */
  delayMs: number;
  /** Line ending of the SSE framing. */
  lineBreak: '\n' | '\r\n';
  /** Destroy the socket once this many deltas are on the wire. */
  disconnectAfterDeltas: number | undefined;
  /** Destroy the socket instead of sending the event that finishes the answer (see `ServerSentEvent.finishes`). */
  disconnectBeforeFinish?: boolean;
  /** Send the delta after this many deltas malformed (see {@link malformEvent}). */
  malformedEventAfterDeltas?: number | undefined;
  /** Gates to wait at, each after its number of deltas. */
  holds?: MockHold[];
  /** An error event that replaces the stream after `afterDeltas` deltas. */
  streamError?: { afterDeltas: number; event: ServerSentEvent };
}

/** Marks a gate reached and waits until it is open, or until `signal` aborts (the client went away). */
export type HoldAt = (gate: string, signal: AbortSignal) => Promise<void>;

/** Characters of unpaced SSE text gathered before one write. */
const WRITE_BATCH_CHARS = 64 * 1024;

/**
 * Writes SSE events, pausing `delayMs` before each delta so clients can observe streaming.
 * With `disconnectAfterDeltas`, destroys the socket once that many deltas are on the wire
 * (right after the headers for 0; after the last event when the stream has fewer deltas), so the
 * client sees the stream break instead of end; with `disconnectBeforeFinish`, destroys it in
 * place of the event that finishes the answer (after the last event when none is marked). Stops
 * quietly when the client goes away (an aborted turn). `holdAt` waits at each of the script's holds.
 */
export async function sendEvents(
  response: ServerResponse,
  events: ServerSentEvent[],
  options: SendEventsOptions,
  holdAt: HoldAt,
): Promise<void> {
  const disconnected = new AbortController();
  response.on('close', () => disconnected.abort());
  response.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
  // Headers go out now: a client waiting on the response must not wait for the first delay.
  response.flushHeaders();
  const { delayMs, disconnectAfterDeltas } = options;
  // Every event is handed to the socket before it is destroyed: destroying it drops unwritten data.
  const cuts = disconnectAfterDeltas !== undefined || options.disconnectBeforeFinish === true;
  let deltasSent = 0;
  let batch = '';
  try {
    const { streamError } = options;
    let stream = streamError ? [...cutAfterDeltas(events, streamError.afterDeltas), streamError.event] : events;
    if (options.disconnectBeforeFinish) {
      const finish = stream.findIndex((event) => event.finishes === true);
      if (finish >= 0) stream = stream.slice(0, finish);
    }
    const pending = [...(options.holds ?? [])];
    const passHolds = async (count: number | undefined): Promise<void> => {
      // Each hold is passed once, in script order; `undefined` passes every hold left (the end).
      for (const hold of [...pending]) {
        if (count !== undefined && hold.afterDeltas !== count) continue;
        pending.splice(pending.indexOf(hold), 1);
        // What was batched so far reaches the client before the stream waits.
        if (batch) {
          response.write(batch);
          batch = '';
        }
        await holdAt(hold.gate, disconnected.signal);
      }
    };
    for (const event of stream) {
      if (disconnectAfterDeltas !== undefined && deltasSent >= disconnectAfterDeltas) break;
      if (event.isDelta && pending.length > 0) {
        await passHolds(deltasSent);
        if (disconnected.signal.aborted) return;
      }
      if (event.isDelta && delayMs > 0) await sleep(delayMs, undefined, { signal: disconnected.signal });
      if (disconnected.signal.aborted) return;
      const malformed = event.isDelta && deltasSent === options.malformedEventAfterDeltas;
      if (event.isDelta) deltasSent += 1;
      const text = formatServerSentEvent(malformed ? malformEvent(event) : event, options.lineBreak);
      if (cuts) {
        await writeFlushed(response, text, disconnected.signal);
      } else if (delayMs === 0) {
        // Unpaced events go out in batches: the bytes are the same, but a stream of hundreds
        // of thousands of deltas costs a few hundred writes instead of one chunk each.
        batch += text;
        if (batch.length >= WRITE_BATCH_CHARS) {
          const full = batch;
          batch = '';
          if (!response.write(full)) await once(response, 'drain', { signal: disconnected.signal });
        }
      } else if (!response.write(text)) {
        await once(response, 'drain', { signal: disconnected.signal });
      }
    }
    await passHolds(undefined);
    if (disconnected.signal.aborted) return;
    if (cuts) response.destroy();
    else response.end(batch);
  } catch (error) {
    if (!disconnected.signal.aborted) throw error;
  }
}

/**
 * Frames one event as SSE text (source: WHATWG HTML, server-sent events): an optional
 * `event: NAME` line, a `data: JSON` line, then a blank line, each line ended by `lineBreak`
 * (LF by default; Gemini's servers use CRLF). `[DONE]` is sent verbatim.
 */
export function formatServerSentEvent(event: ServerSentEvent, lineBreak: '\n' | '\r\n' = '\n'): string {
  const data = event.data === '[DONE]' ? '[DONE]' : JSON.stringify(event.data);
  return `${event.event !== undefined ? `event: ${event.event}${lineBreak}` : ''}data: ${data}${lineBreak}${lineBreak}`;
}

/** The events up to (not including) the delta after the `count`-th. */
function cutAfterDeltas(events: ServerSentEvent[], count: number): ServerSentEvent[] {
  let deltas = 0;
  const kept: ServerSentEvent[] = [];
  for (const event of events) {
    if (event.isDelta && deltas++ >= count) break;
    kept.push(event);
  }
  return kept;
}

/** Fields that carry generated content in the delta events of the four wire formats. */
const CONTENT_FIELDS = new Set(['delta', 'text', 'content', 'reasoning_content', 'thinking', 'partial_json', 'arguments']);

/**
 * A copy of a delta event whose first generated-content string (depth first: Responses
 * `delta`, Anthropic `delta.text`, Chat Completions `choices[0].delta.content`, Gemini
 * `candidates[0].content.parts[0].text`) is replaced by the number 42, which every API's
 * schema refuses.
 */
export function malformEvent(event: ServerSentEvent): ServerSentEvent {
  let done = false;
  const visit = (value: unknown): unknown => {
    if (done || typeof value !== 'object' || value === null) return value;
    if (Array.isArray(value)) return value.map(visit);
    const copy: Record<string, unknown> = {};
    for (const [key, field] of Object.entries(value)) {
      if (!done && CONTENT_FIELDS.has(key) && typeof field === 'string') {
        copy[key] = 42;
        done = true;
      } else {
        copy[key] = visit(field);
      }
    }
    return copy;
  };
  return { ...event, data: visit(event.data) };
}

/** Writes `text` and resolves once it is handed to the socket, or at once when `signal` aborts (client gone). */
function writeFlushed(response: ServerResponse, text: string, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = (): void => {
      signal.removeEventListener('abort', done);
      resolve();
    };
    signal.addEventListener('abort', done);
    response.write(text, done);
  });
}
