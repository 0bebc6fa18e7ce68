/**
 * Replaying a recorded Codex app-server session against `openvaala app-server`: the message
 * sequences of both runs, reduced to what they mean (method names, answers named by the
 * request they answer, thread statuses with their flags), to compare them.
 */
import type { WireEntry } from './codex-schema.js';

/**
 * Notifications of the recorded Codex server that carry no meaning for OpenVaala, left out of
 * the comparison:
 * - `remoteControl/status/changed`: Codex's cloud remote-control feature, which OpenVaala has not;
 * - `warning`: Codex warning that it has no metadata for the mock model of its own catalog;
 * - `account/rateLimits/updated`: the ChatGPT account's rate limits; OpenVaala has no account.
 */
export const CODEX_ONLY_NOTIFICATIONS = new Set(['remoteControl/status/changed', 'warning', 'account/rateLimits/updated']);

/**
 * Notifications the adapter sends that the recorded sessions lack, left out of the comparison
 * and checked on their own: `turn/diff/updated` (the turn's aggregated diff after each file
 * change; Codex 0.171.0 sends it only from its own git-based diff tracker, which the recorded
 * session did not run).
 */
export const ADAPTER_EXTRA_NOTIFICATIONS = new Set(['turn/diff/updated']);

function statusLabel(params: unknown): string {
  const status = (params as { status?: { type?: string; activeFlags?: string[] } }).status;
  return `thread/status/changed ${status?.type ?? '?'}${status?.activeFlags?.length ? `[${status.activeFlags.join(',')}]` : ''}`;
}

function itemLabel(method: string, params: unknown): string {
  return `${method} ${(params as { item?: { type?: string } }).item?.type ?? '?'}`;
}

/** One direction of a conversation as labels: `request X`, `answer X`, `error X`, or the notification (with its item type or thread status). */
export function labels(entries: readonly WireEntry[], dir: WireEntry['dir'], skip: ReadonlySet<string>): string[] {
  const requests = new Map<string, string>();
  const out: string[] = [];
  for (const { dir: entryDir, msg } of entries) {
    if (msg.method !== undefined && msg.id !== undefined && msg.id !== null) requests.set(`${entryDir}:${String(msg.id)}`, msg.method);
    if (entryDir !== dir) continue;
    if (msg.method !== undefined) {
      if (skip.has(msg.method)) continue;
      if (msg.id !== undefined) out.push(`request ${msg.method}`);
      else if (msg.method === 'thread/status/changed') out.push(statusLabel(msg.params));
      else if (msg.method === 'item/started' || msg.method === 'item/completed') out.push(itemLabel(msg.method, msg.params));
      else out.push(msg.method);
      continue;
    }
    const answered = requests.get(`${dir === 's->c' ? 'c->s' : 's->c'}:${String(msg.id)}`) ?? '?';
    out.push(`${msg.error ? 'error' : 'answer'} ${answered}`);
  }
  return out;
}

/**
 * The recorded sequence in the order the adapter can keep. The two recordings disagree on one
 * order: in `shell-approval` Codex says the thread waits on approval just before announcing the
 * command item, in `patch-approval` just after announcing the file change. The adapter learns
 * of the approval after the item starts (the runtime announces the call, then asks), so it
 * always says it after; the shell recording is compared with that pair swapped.
 */
export function normalizedFixtureLabels(sequence: readonly string[]): string[] {
  const result = [...sequence];
  for (let index = 0; index + 1 < result.length; index++) {
    if (result[index] === 'thread/status/changed active[waitingOnApproval]' && result[index + 1]!.startsWith('item/started ')) {
      [result[index], result[index + 1]] = [result[index + 1]!, result[index]!];
    }
  }
  return result;
}
