/**
 * State of a page that lists entries from the server and changes them (a project's members,
 * its secrets): the list, read when `key` changes and again after each change, the last
 * failure and the last success message.
 */
import { useEffect, useState } from 'preact/hooks';
import { failureMessage } from './feedback.js';

/** What {@link useReloadingList} gives a page. */
export interface ReloadingList<Entry> {
  entries: Entry[];
  error: string | undefined;
  saved: string | undefined;
  /**
   * Runs a change, then reads the list again. A failure (of either) becomes `error`; after
   * success `saved` becomes `done` (undefined: no message).
   */
  change(work: () => Promise<unknown>, done?: string): Promise<void>;
}

/**
 * @param read the request listing the entries
 * @param key what the list belongs to (a project id): a new key reads the list again
 */
export function useReloadingList<Entry>(read: () => Promise<Entry[]>, key: string): ReloadingList<Entry> {
  const [entries, setEntries] = useState<Entry[]>([]);
  const [error, setError] = useState<string | undefined>();
  const [saved, setSaved] = useState<string | undefined>();
  // Never rejects: a failed read becomes `error`.
  const load = (): Promise<void> => read().then(setEntries, (failure: unknown) => setError(failureMessage(failure)));
  useEffect(() => {
    load().catch(() => undefined);
  }, [key]);
  const change = async (work: () => Promise<unknown>, done?: string) => {
    setError(undefined);
    setSaved(undefined);
    try {
      await work();
      setSaved(done);
      await load();
    } catch (failure) {
      setError(failureMessage(failure));
    }
  };
  return { entries, error, saved, change };
}
