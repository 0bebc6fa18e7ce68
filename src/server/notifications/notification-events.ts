/**
 * Which runtime events notify people (docs/notifications.md, "Events"), and the short text of
 * each: a root session's turn that completed (saying first when its answer may be incomplete:
 * `Output limit reached: …`) or failed, a tool call waiting for approval, a
 * `request_user_input` question waiting for an answer. Interrupted turns (someone stopped them)
 * and subagents' turns (part of their parent's turn) notify nobody.
 */
import type { AnyNotification, NotificationEventKind, PushPayload } from '../../protocol/index.js';
import { describeStopReason, turnEndNotice } from '../../protocol/stop-reasons.js';

/** Longest `text` of a notification, characters. */
export const NOTIFICATION_TEXT_MAX_CHARS = 200;

/** What the event-to-notification mapping reads of a conversation. */
export interface NotifiedConversation {
  id: string;
  state: { title: string; rootSessionId: string };
}

/** Cuts text to one line of at most {@link NOTIFICATION_TEXT_MAX_CHARS} characters. */
export function shortText(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length <= NOTIFICATION_TEXT_MAX_CHARS ? line : `${line.slice(0, NOTIFICATION_TEXT_MAX_CHARS - 1)}…`;
}

function sentenceCase(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/**
 * Follows the events of open conversations and turns those that notify into payloads. Keeps,
 * per conversation, the last assistant message of the root session's running turn, which is
 * the text of its `turn_completed`.
 */
export class NotificationEvents {
  private readonly lastAnswers = new Map<string, string>();

  /**
   * The payload an event deserves, or undefined.
   * @param now ms since the epoch
   */
  payloadOf(conversation: NotifiedConversation, event: AnyNotification, now = Date.now()): PushPayload | undefined {
    const make = (kind: NotificationEventKind, text: string): PushPayload => ({ kind, conversationId: conversation.id, title: conversation.state.title || 'Conversation', text: shortText(text), url: `#/c/${conversation.id}`, at: now });
    switch (event.method) {
      case 'item/completed': {
        const item = event.params.item;
        if (item.kind === 'assistant_message' && event.params.sessionId === conversation.state.rootSessionId && item.text.trim() !== '') this.lastAnswers.set(conversation.id, item.text);
        return undefined;
      }
      case 'turn/completed': {
        const turn = event.params.turn;
        if (turn.sessionId !== conversation.state.rootSessionId) return undefined;
        const answer = this.lastAnswers.get(conversation.id);
        this.lastAnswers.delete(conversation.id);
        if (turn.status === 'completed') {
          // A cut answer is not told as if it were whole: its stop reason goes first, where the text is never cut.
          const reason = turn.stopReason !== undefined && turnEndNotice(turn) ? sentenceCase(describeStopReason(turn.stopReason).label) : undefined;
          if (reason) return make('turn_completed', `${reason}: ${answer ?? 'the turn completed.'}`);
          return make('turn_completed', answer ?? 'The turn completed.');
        }
        if (turn.status === 'failed') return make('turn_failed', `The turn failed${turn.error ? `: ${turn.error}` : '.'}`);
        return undefined;
      }
      case 'approval/requested':
        return make('approval_requested', `Approval needed: ${event.params.approval.toolName}${event.params.approval.reason ? ` (${event.params.approval.reason})` : ''}`);
      case 'input/requested':
        return make('input_requested', `Question: ${event.params.request.question}`);
      default:
        return undefined;
    }
  }

  /** Forgets what is kept for a conversation (it was closed or deleted). */
  forget(conversationId: string): void {
    this.lastAnswers.delete(conversationId);
  }
}
