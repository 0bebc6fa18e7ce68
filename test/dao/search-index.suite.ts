/**
 * The behaviour every ConversationSearchIndex shares, whatever its database: matching
 * (ranking-agnostic: compared as sets or in update order), prefix words, case and diacritics,
 * update order and paging, title replacement, removal, rebuild, and clear errors for bad
 * queries and bad input that leave the stored index untouched. Each index's test file seeds
 * its own index with {@link seedSearchIndex} and calls {@link searchIndexCases} inside its
 * `describe`, then adds the cases only its database has.
 */
import { expect, it } from 'vitest';
import { InvalidSearchQueryError, type ConversationSearchIndex } from '../../src/dao/conversation-search-index.js';
import { searchDocumentPieces } from '../../src/dao/search-document-pieces.js';


/**
 * Loads the three conversations and three messages every shared case expects: `conv_a`
 * (parser, tokenizer; updated at 1000 ms), `conv_b` (release notes; 2000 ms) and `conv_c`
 * (accented title; 3000 ms).
 */
export async function seedSearchIndex(search: ConversationSearchIndex): Promise<void> {
  await search.setConversations([
    { conversationId: 'conv_a', title: 'Fix the parser', updatedAt: 1000 },
    { conversationId: 'conv_b', title: 'Write the release notes', updatedAt: 2000 },
    { conversationId: 'conv_c', title: 'Café déjà vu', updatedAt: 3000 },
  ]);
  await search.addMessages([
    { conversationId: 'conv_a', text: 'The tokenizer drops the last character' },
    { conversationId: 'conv_a', text: 'I changed tokenize() to keep it; tests pass.' },
    { conversationId: 'conv_b', text: 'Summarise the changes since version 1.2' },
  ]);
}

/** Every conversation id matching `query`, read in pages of two, sorted. */
export async function matchingIds(search: ConversationSearchIndex, query: string): Promise<string[]> {
  const found: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await search.search(query, { limit: 2, ...(cursor ? { cursor } : {}) });
    found.push(...page.matches.map((match) => match.conversationId));
    cursor = page.nextCursor;
  } while (cursor);
  return found.sort();
}

/**
 * Registers the shared cases in the surrounding `describe`. `current` returns the index the
 * file's `beforeEach` opened and seeded with {@link seedSearchIndex} for the running case.
 */
export function searchIndexCases(current: () => ConversationSearchIndex): void {
  const ids = (query: string): Promise<string[]> => matchingIds(current(), query);

  it('matches titles and messages; several words must all occur in one document', async () => {
    expect(await ids('parser')).toEqual(['conv_a']);
    expect(await ids('tokenizer')).toEqual(['conv_a']);
    expect(await ids('the')).toEqual(['conv_a', 'conv_b']);
    expect(await ids('changes OR tokenizer')).toEqual(['conv_a', 'conv_b']);
    expect(await ids('tokenizer character')).toEqual(['conv_a']);
    // "parser" is in the title, "character" in a message: no single document holds both.
    expect(await ids('parser character')).toEqual([]);
    expect(await ids('"release notes"')).toEqual(['conv_b']);
    expect(await ids('"notes release"')).toEqual([]);
    expect(await ids('nowhere')).toEqual([]);
  });

  it('matches prefix words, case and diacritics insensitively', async () => {
    expect(await ids('token*')).toEqual(['conv_a']);
    expect(await ids('TOKENIZ*')).toEqual(['conv_a']);
    expect(await ids('rel*')).toEqual(['conv_b']);
    expect(await ids('cafe deja')).toEqual(['conv_c']);
    expect(await ids('tok')).toEqual([]);
  });

  it('orders matches by update time, newest first, and pages without repeats', async () => {
    const search = current();
    await search.setConversations([{ conversationId: 'conv_d', title: 'the end', updatedAt: 2000 }]);
    const first = await search.search('the', { limit: 2 });
    expect(first.matches).toEqual([
      { conversationId: 'conv_d', updatedAt: 2000 },
      { conversationId: 'conv_b', updatedAt: 2000 },
    ]);
    const second = await search.search('the', { limit: 2, cursor: first.nextCursor as string });
    expect(second.matches).toEqual([{ conversationId: 'conv_a', updatedAt: 1000 }]);
    expect(second.nextCursor).toBeUndefined();
  });

  it('replaces a changed title and moves the conversation in the order', async () => {
    const search = current();
    await search.setConversations([{ conversationId: 'conv_a', title: 'Refactor the lexer', updatedAt: 5000 }]);
    expect(await ids('parser')).toEqual([]);
    expect(await ids('lexer')).toEqual(['conv_a']);
    expect(await ids('tokenizer')).toEqual(['conv_a']);
    expect((await search.search('the')).matches[0]).toEqual({ conversationId: 'conv_a', updatedAt: 5000 });
    await search.setConversations([{ conversationId: 'conv_a', title: '', updatedAt: 6000 }]);
    expect(await ids('lexer')).toEqual([]);
  });

  it('removes a conversation with its title and messages, and ignores unknown ids', async () => {
    const search = current();
    await search.removeConversation('conv_a');
    await search.removeConversation('conv_unknown');
    expect(await ids('parser OR tokenizer')).toEqual([]);
    expect(await ids('the')).toEqual(['conv_b']);
  });

  it('creates an untitled conversation for messages of an unknown one', async () => {
    const search = current();
    await search.addMessages([{ conversationId: 'conv_new', text: 'orphan message' }]);
    expect((await search.search('orphan')).matches).toEqual([{ conversationId: 'conv_new', updatedAt: 0 }]);
  });

  it('empties everything on startRebuild and keeps working after finishRebuild', async () => {
    const search = current();
    await search.startRebuild();
    expect(await ids('the')).toEqual([]);
    await search.setConversations([{ conversationId: 'conv_x', title: 'again the parser', updatedAt: 1 }]);
    await search.finishRebuild();
    expect(await ids('parser')).toEqual(['conv_x']);
  });

  it.each([
    ['(', /the query holds no word to search for/],
    ['hello OR', /^the query is not valid at its end: AND, OR and NOT need a word on each side/],
    ['NOT hello', /^the query is not valid near "NOT": AND, OR and NOT need a word on each side/],
    ['hello AND (NOT there)', /^the query is not valid near "NOT": AND, OR and NOT need a word on each side/],
    ['(hello', /^the query is not valid (at its end|near "\(")/],
    ['"unterminated', /unterminated string/],
    ['*', /the query holds no word to search for/],
    ['((((', /the query holds no word to search for/],
    ['   ', /the query is empty/],
    ['- / :', /the query holds no word to search for/],
  ])('rejects the query %j with an InvalidSearchQueryError saying why and how to write one', async (query, reason) => {
    const error = await current().search(query).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(InvalidSearchQueryError);
    expect((error as Error).message).toMatch(reason);
    expect((error as Error).message).toContain('a word with punctuation (hello-world, file.ts) is searched as a phrase');
  });

  it('searches a word with punctuation, typed bare, as the phrase of its parts', async () => {
    await current().addMessages([{ conversationId: 'conv_b', text: 'see readme.md, fix hello-world in src/app.ts (key:value)' }]);
    for (const query of ['readme.md', 'hello-world', 'src/app.ts', 'key:value', 'nosuchcolumn: key', '(readme.md OR nothing)', 'readme.m*', 'hello-world NOT absent', 'readme.md AND(hello-world OR absent)', 'see NOT(absent)', 'rea*', 'readme.md"see"']) {
      expect(await ids(query), query).toEqual(query.startsWith('nosuchcolumn') ? [] : ['conv_b']);
    }
    // The parts must be next to each other, as in a quoted phrase.
    expect(await ids('world-hello')).toEqual([]);
  });

  it('finds any word of a message longer than one search document, and a phrase across a cut', async () => {
    // 200,000 distinct words (about 1.6 MB): indexed in pieces, every one of them is found.
    const words = Array.from({ length: 200_000 }, (_, index) => `w${index.toString(36)}`);
    await current().addMessages([{ conversationId: 'conv_long', text: words.join(' ') }]);
    expect(await ids('w0')).toEqual(['conv_long']);
    expect(await ids(`w${(199_999).toString(36)}`)).toEqual(['conv_long']);
    const pieces = searchDocumentPieces(words.join(' '));
    expect(pieces.length).toBeGreaterThan(1);
    // The words on either side of the first cut, as a phrase.
    const firstPieceWords = (pieces[0] as string).trim().split(' ');
    const lastOfFirst = firstPieceWords.at(-1) as string;
    const following = words[words.indexOf(lastOfFirst) + 1] as string;
    expect(await ids(`"${lastOfFirst} ${following}"`)).toEqual(['conv_long']);
    expect(await ids(`"${following} ${lastOfFirst}"`)).toEqual([]);
  });

  it('finds the words a terminal shows in a title or message written with escape sequences', async () => {
    const search = current();
    await search.setConversations([{ conversationId: 'conv_colour', title: 'title \u001b[31mREDWORD\u001b[0m', updatedAt: 50 }]);
    await search.addMessages([{ conversationId: 'conv_colour', text: 'built \u001b[1;32mGREENWORD\u001b[0m ok' }]);
    expect((await search.search('redword')).matches.map((match) => match.conversationId)).toEqual(['conv_colour']);
    expect((await search.search('greenword')).matches.map((match) => match.conversationId)).toEqual(['conv_colour']);
  });

  it('finds words with punctuation when they are quoted', async () => {
    await current().addMessages([{ conversationId: 'conv_b', text: 'see readme.md and CHANGELOG' }]);
    expect(await ids('"readme.md"')).toEqual(['conv_b']);
  });

  it('rejects a bad limit or cursor naming the option', async () => {
    const search = current();
    await expect(search.search('the', { limit: 0 })).rejects.toThrow(/limit 0: must be an integer >= 1/);
    await expect(search.search('the', { cursor: 'not-a-cursor' })).rejects.toThrow(/Invalid list cursor/);
  });

  it('rejects bad input naming the entry, and writes nothing of the batch', async () => {
    const search = current();
    await expect(search.setConversations([{ conversationId: 'conv_ok', title: 'ok', updatedAt: 1 }, { conversationId: '', title: 'x', updatedAt: 1 }])).rejects.toThrow(/entry 1: conversationId must be a non-empty string/);
    await expect(search.setConversations([{ conversationId: 'conv_ok', title: 'ok', updatedAt: -1 }])).rejects.toThrow(/entry 0: updatedAt must be an integer/);
    await expect(search.addMessages([{ conversationId: 'conv_ok', text: 'fine' }, { conversationId: 'conv_ok', text: 42 as unknown as string }])).rejects.toThrow(/message 1: text must be a string/);
    expect(await ids('ok OR fine')).toEqual([]);
    expect(await ids('the')).toEqual(['conv_a', 'conv_b']);
  });
}
