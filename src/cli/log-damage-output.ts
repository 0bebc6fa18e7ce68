/**
 * How commands that read a conversation tell about damage in its logs (the `damage` of
 * `conversation/get` and `conversation/export`, docs/protocol.md): one warning line each.
 */
import type { LogDamage } from '../protocol/index.js';
import { showDataDirectory } from './data-directory-text.js';

/**
 * One warning line per damaged log line or entry the server skipped, naming where it is and
 * what became of it; '' when there is none.
 * @param damage the `damage` of the server's answer
 * @param dataDirectory the data directory of the local server that answered: `<data dir>/` in
 *   the locations becomes its path (see `data-directory-text.ts`)
 */
export function formatLogDamage(damage: readonly LogDamage[] | undefined, dataDirectory?: string): string {
  const located = (text: string): string => (dataDirectory === undefined ? text : showDataDirectory(text, dataDirectory));
  return (damage ?? []).map((entry) => `warning: damaged log ${located(entry.location)}: ${located(entry.message)}\n`).join('');
}
