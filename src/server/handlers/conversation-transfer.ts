/**
 * Handlers of `conversation/export` and `conversation/import` (docs/protocol.md, "Export and
 * import"; archive format in docs/storage.md).
 */
import { ArchiveFormatError, serializeArchive } from '../../dao/conversation-archive.js';
import { ErrorCodes, RpcError, type MethodName, type MethodParams, type MethodResult } from '../../protocol/index.js';
import { exportConversation, importConversation, type ImportOutcome } from '../../runtime/conversation-transfer.js';
import { planTurnRecovery } from '../../dao/turn-recovery.js';
import { NotFoundError } from '../../runtime/runtime.js';
import type { RequestContext } from '../method-handlers.js';
import { hideDataDirectory } from '../request-errors.js';
import type { RpcConnection } from '../rpc-connection.js';

type TransferMethod = 'conversation/export' | 'conversation/import';

/** The transfer handlers, by method. */
export type TransferHandlers = { [M in TransferMethod & MethodName]: (params: MethodParams<M>, request: RequestContext) => Promise<MethodResult<M>> };

/** Builds the transfer handlers bound to one connection. */
export function createTransferHandlers(connection: RpcConnection): TransferHandlers {
  const runtime = connection.runtime;
  return {
    async 'conversation/export'(params) {
      const archive = await exportConversation(runtime, params.conversationId);
      if (!archive) throw new NotFoundError(`conversation "${params.conversationId}" does not exist`);
      const damage = runtime.store.logDamage(params.conversationId).map((entry) => ({ ...entry, location: hideDataDirectory(entry.location) }));
      return { conversationId: params.conversationId, archive: serializeArchive(archive), ...(damage.length > 0 ? { damage } : {}) };
    },

    async 'conversation/import'(params) {
      let outcome;
      try {
        outcome = await importConversation(runtime, params.archive, { asNew: params.asNew === true });
      } catch (error) {
        if (error instanceof ArchiveFormatError) throw new RpcError(ErrorCodes.invalidParams, `conversation/import: params.archive: ${error.message}`);
        throw error;
      }
      // Exported mid-turn: the turn is over here. Opening the conversation records it
      // interrupted (as for a server that died), so it is not left running in the listing.
      if (planTurnRecovery(outcome.state)) {
        const live = await runtime.getConversation(outcome.conversationId);
        return { conversation: live.state, session: live.rootSession.state, ...counts(outcome) };
      }
      const root = outcome.state.sessions.find((session) => session.id === outcome.state.conversation.rootSessionId);
      if (!root) throw new Error(`conversation ${outcome.conversationId} has no root session`);
      return {
        conversation: outcome.state.conversation,
        session: root,
        ...counts(outcome),
      };
    },
  };
}

function counts(outcome: ImportOutcome): { archivedConversationId: string; renamed: boolean; items: number; attachments: number } {
  return {
    archivedConversationId: outcome.archivedConversationId,
    renamed: outcome.renamed,
    items: outcome.items,
    attachments: outcome.attachments,
  };
}
