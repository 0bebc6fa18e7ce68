/**
 * `input/respond`: a client answers a `request_user_input` question (first answer wins).
 */
import { ErrorCodes, RpcError } from '../../protocol/index.js';
import { InvalidUserAnswerError } from '../../runtime/user-input/broker.js';
import type { MethodHandlers } from '../method-handlers.js';
import type { RpcConnection } from '../rpc-connection.js';

/**
 * The user input handlers bound to one connection.
 * @returns `input/respond`, which answers `accepted: false` for a question already answered
 *   or cancelled, -32004 for an unknown conversation, and -32602 naming `params.answer` for an
 *   answer outside the choices of a question that takes no free text
 */
export function createUserInputHandlers(connection: RpcConnection): Pick<MethodHandlers, 'input/respond'> {
  return {
    async 'input/respond'(params) {
      const conversation = await connection.runtime.getConversation(params.conversationId);
      try {
        return { accepted: conversation.userInputs.respond(params.requestId, params.answer, `client:${connection.clientName}`) };
      } catch (error) {
        if (error instanceof InvalidUserAnswerError) throw new RpcError(ErrorCodes.invalidParams, `input/respond: params.answer: ${error.message}`);
        throw error;
      }
    },
  };
}
