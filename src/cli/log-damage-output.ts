/**
 * How commands that read a conversation tell about damage in its logs (the `damage` of
 * `conversation/get` and `conversation/export`, docs/protocol.md): one warning line each.
 */
import type { LogDamage } from '../protocol/index.js';

/**
 * One warning line per damaged log line or entry the server skipped, naming where it is and
 * what became of it; '' when there is none.
 */
export function formatLogDamage(damage: readonly LogDamage[] | undefined): string {
  return (damage ?? []).map((entry) => `warning: damaged log ${entry.location}: ${entry.message}\n`).join('');
}
