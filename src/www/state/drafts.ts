/**
 * Composer drafts kept per browser tab: what was typed but not sent survives switching
 * conversations and reloading the tab. They live in `sessionStorage`, which belongs to one tab,
 * so two tabs keep independent drafts; closing the tab forgets them. Each draft is one entry
 * (`openvaala.draft.<key>`), so typing rewrites only its own draft. Storage is bounded: a draft
 * is cut to {@link MAX_DRAFT_CHARACTERS} and only the {@link MAX_DRAFTS} most recently edited
 * drafts are kept (docs/web-ui.md, "Drafts").
 */

/** Prefix of the storage entries holding drafts. */
const ENTRY_PREFIX = 'openvaala.draft.';

/**
 * Longest stored draft, in UTF-16 code units: 51,200 units are 100 KiB as browsers count
 * storage (2 bytes a unit). Longer text stays in the box but only its beginning is stored.
 */
export const MAX_DRAFT_CHARACTERS = 51_200;

/** Most drafts kept; saving one more drops the least recently edited. */
export const MAX_DRAFTS = 50;

/** The draft key of a conversation's composer. */
export function conversationDraftKey(conversationId: string): string {
  return `conversation.${conversationId}`;
}

/** The draft key of the first message on the new-conversation form. */
export const NEW_CONVERSATION_DRAFT_KEY = 'new-conversation';

/**
 * The part of the Web Storage API that drafts use (`sessionStorage` in the page; tests pass
 * their own). `setItem` may throw when the storage is full.
 */
export interface DraftStorage {
  readonly length: number;
  key(index: number): string | null;
  getItem(name: string): string | null;
  setItem(name: string, value: string): void;
  removeItem(name: string): void;
}

/** One stored draft: its text and when it was last saved (ms since the epoch). */
interface StoredDraft {
  text: string;
  savedAt: number;
}

function parseEntry(raw: string | null): StoredDraft | undefined {
  if (raw === null) return undefined;
  try {
    const value = JSON.parse(raw) as Partial<StoredDraft>;
    return typeof value.text === 'string' && typeof value.savedAt === 'number' ? { text: value.text, savedAt: value.savedAt } : undefined;
  } catch {
    return undefined;
  }
}

function defaultStorage(): DraftStorage | undefined {
  try {
    return (globalThis as { sessionStorage?: DraftStorage }).sessionStorage;
  } catch {
    // Storage can be denied (e.g. by browser settings): drafts are then not kept.
    return undefined;
  }
}

/**
 * Reads a draft. An entry that is not a draft (hand-edited or from an older page) counts as no
 * draft and is left alone.
 * @param key a key from {@link conversationDraftKey} or {@link NEW_CONVERSATION_DRAFT_KEY}
 * @returns the stored text, or '' when there is none
 */
export function loadDraft(key: string, storage: DraftStorage | undefined = defaultStorage()): string {
  return parseEntry(storage?.getItem(ENTRY_PREFIX + key) ?? null)?.text ?? '';
}

/**
 * Saves a draft, or removes it when `text` is empty. Text over {@link MAX_DRAFT_CHARACTERS} is
 * cut (never inside a surrogate pair); a new draft beyond {@link MAX_DRAFTS} drops the least
 * recently saved ones. A full or denied storage loses only the draft being saved: never throws.
 * @param now clock in ms since the epoch (tests pass their own)
 */
export function saveDraft(key: string, text: string, storage: DraftStorage | undefined = defaultStorage(), now: number = Date.now()): void {
  if (!storage) return;
  const name = ENTRY_PREFIX + key;
  if (text === '') {
    storage.removeItem(name);
    return;
  }
  let kept = text.length > MAX_DRAFT_CHARACTERS ? text.slice(0, MAX_DRAFT_CHARACTERS) : text;
  if (/[\uD800-\uDBFF]$/.test(kept)) kept = kept.slice(0, -1);
  const isNew = storage.getItem(name) === null;
  try {
    storage.setItem(name, JSON.stringify({ text: kept, savedAt: now } satisfies StoredDraft));
  } catch {
    return;
  }
  if (isNew) dropOldestDrafts(storage, name);
}

/** Removes a draft (after its message was sent). */
export function clearDraft(key: string, storage: DraftStorage | undefined = defaultStorage()): void {
  storage?.removeItem(ENTRY_PREFIX + key);
}

/**
 * Drops the oldest drafts beyond {@link MAX_DRAFTS}, never `saved` (the one just saved): drafts
 * saved in the same millisecond tie, and the storage's key order (implementation-defined) would
 * otherwise decide.
 */
function dropOldestDrafts(storage: DraftStorage, saved: string): void {
  const drafts: Array<{ name: string; savedAt: number }> = [];
  for (let index = 0; index < storage.length; index++) {
    const name = storage.key(index);
    if (name?.startsWith(ENTRY_PREFIX)) drafts.push({ name, savedAt: parseEntry(storage.getItem(name))?.savedAt ?? 0 });
  }
  if (drafts.length <= MAX_DRAFTS) return;
  const others = drafts.filter((draft) => draft.name !== saved).sort((first, second) => first.savedAt - second.savedAt);
  for (const draft of others.slice(0, drafts.length - MAX_DRAFTS)) storage.removeItem(draft.name);
}
