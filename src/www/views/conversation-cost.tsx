/**
 * What a conversation has cost (`costs/conversation`, read again after each of its turns), and
 * the notice a turn gives when it brings the conversation's project to a monthly cost
 * threshold (`costs/thresholdReached`).
 */
import { useEffect, useState } from 'preact/hooks';
import type { CostTotals } from '../../protocol/costs.js';
import type { NotificationParams } from '../../protocol/methods.js';
import { formatTokens, formatUsd } from '../components/format.js';
import { useApp } from '../state/app-state.js';

/** How long after a turn's end its cost is read again, ms (see `ConversationCost`). */
const COST_RECHECK_MS = 1_000;

/** The conversation's total cost and tokens, in its header (nothing while unknown). */
export function ConversationCost({ conversationId }: { conversationId: string }) {
  const app = useApp();
  const [totals, setTotals] = useState<CostTotals | undefined>();
  useEffect(() => {
    const read = () =>
      void app.client.request('costs/conversation', { conversationId }).then(
        (result) => setTotals(result.totals),
        // A server or caller without costs shows none.
        () => setTotals(undefined),
      );
    read();
    // A turn's cost enters the ledger after clients hear `turn/completed` (the work after a turn
    // runs once it is announced): read at once, and again a moment later for that turn.
    const timers = new Set<ReturnType<typeof setTimeout>>();
    const removeListener = app.client.onNotification((event) => {
      if (event.method !== 'turn/completed' || event.params.conversationId !== conversationId) return;
      read();
      const timer = setTimeout(() => {
        timers.delete(timer);
        read();
      }, COST_RECHECK_MS);
      timers.add(timer);
    });
    return () => {
      removeListener();
      for (const timer of timers) clearTimeout(timer);
    };
  }, [conversationId]);
  if (!totals || totals.turns === 0) return null;
  const unpriced = totals.unpricedTurns > 0 ? ` (${totals.unpricedTurns} turn${totals.unpricedTurns === 1 ? '' : 's'} without prices)` : '';
  return (
    <div class="muted conversation-cost" aria-label="Conversation cost">
      Conversation: {formatUsd(totals.costUsd)} · {formatTokens(totals.usage.totalTokens)} tokens in {totals.turns} turn{totals.turns === 1 ? '' : 's'}
      {unpriced}
    </div>
  );
}

/** The last threshold this conversation's turns reached, as a status line that can be dismissed. */
export function CostThresholdNotice({ conversationId }: { conversationId: string }) {
  const app = useApp();
  const [reached, setReached] = useState<NotificationParams<'costs/thresholdReached'> | undefined>();
  useEffect(() => {
    setReached(undefined);
    return app.client.onNotification((event) => {
      if (event.method === 'costs/thresholdReached' && event.params.conversationId === conversationId) setReached(event.params);
    });
  }, [conversationId]);
  if (!reached) return null;
  const text =
    reached.action === 'pause'
      ? `The project has spent ${formatUsd(reached.totalUsd)} in ${reached.month}, reaching its pausing threshold of ${formatUsd(reached.thresholdUsd)}: new turns are refused until a manager raises it or the month ends.`
      : `The project has spent ${formatUsd(reached.totalUsd)} in ${reached.month}, reaching its warning threshold of ${formatUsd(reached.thresholdUsd)}.`;
  return (
    <p role="status" class="note cost-threshold">
      {text}{' '}
      <button type="button" class="secondary small" onClick={() => setReached(undefined)}>
        Dismiss
      </button>
    </p>
  );
}
