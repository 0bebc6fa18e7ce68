/**
 * Protocol methods that move whole conversations between servers (SPEC §2 `openvaala export`
 * / `import`): a conversation as an archive (the JSON Lines text described in
 * docs/storage.md, "Export and import") and back. Spread into `methods` by `methods.ts`.
 */
import { z } from 'zod';
import { ConversationSchema, LogDamageSchema, SessionSchema } from './entities.js';
import { conversationIdParam } from './request-params.js';

/** The transfer request methods: name → params and result schemas. */
export const conversationTransferMethods = {
  /**
   * The conversation's logs as stored (every entry of `metadata.jsonl` and of each session's
   * log, with their seqs) and its attachments, as one archive. Works while a turn runs: it
   * holds what was stored when each log was read.
   */
  'conversation/export': {
    params: z.object({ conversationId: conversationIdParam }),
    result: z.object({
      conversationId: z.string(),
      /** The archive: JSON Lines text, one `\n` after each line. */
      archive: z.string(),
      /** Damaged lines and entries of the logs that were skipped, so the archive lacks them (at most 100); absent when there are none. */
      damage: z.array(LogDamageSchema).optional(),
    }),
  },
  /**
   * Stores a conversation from an archive: all of it is checked first (a bad one is refused
   * with -32602 naming the line and field, and nothing is written), then its attachments and
   * logs are written and it is indexed. It keeps its ids; when its conversation id is stored
   * here already (the same archive imported twice) it is refused with -32009
   * `conversation_exists`, naming that conversation and its title, and nothing is written.
   * With `asNew` it is stored as a copy under new conversation, session and turn ids
   * (`renamed: true`), whether its id is taken or not.
   */
  'conversation/import': {
    params: z.object({
      archive: z.string().min(1),
      /** Store a copy under new conversation, session and turn ids instead of the archive's own. */
      asNew: z.boolean().optional(),
    }),
    result: z.object({
      conversation: ConversationSchema,
      session: SessionSchema,
      /** The conversation id the archive holds. */
      archivedConversationId: z.string(),
      /** True when the conversation was stored under new ids (`asNew`). */
      renamed: z.boolean(),
      /** Items written, over every session. */
      items: z.number().int().nonnegative(),
      attachments: z.number().int().nonnegative(),
    }),
  },
} as const;
