/**
 * The cost ledger (docs/platform.md, "Costs and thresholds"): one record per finished turn in
 * the platform database (namespace `turn_costs`), holding its token usage and its cost as
 * computed when it ended, so a later change of prices never rewrites history. Totals per
 * conversation, per project and month, and per user and month are added up from it.
 */
import type { CostTotals, TokenUsage } from '../../protocol/index.js';
import type { RecordStorage } from '../../storage/record-storage.js';
import { listAll } from '../projects/project-store.js';
import { SerialQueue } from '../serial-queue.js';

/** The namespace of the ledger in the platform database. */
export const TURN_COSTS = 'turn_costs';

/** The user id of turns nobody known started (a scheduled run, an input sent before a restart). */
export const UNATTRIBUTED_USER = 'unattributed';

/** One finished turn as the ledger keeps it. */
export interface TurnCostRecord {
  turnId: string;
  conversationId: string;
  /** The conversation's project when the turn ended; absent outside every project. */
  projectId?: string;
  /** Who started the turn (`local-owner`, a platform user id, or {@link UNATTRIBUTED_USER}). */
  userId: string;
  /** Calendar month (UTC) the turn ended in, `YYYY-MM`. */
  month: string;
  /** `provider/model` the turn ran on. */
  model?: string;
  usage: TokenUsage;
  /** USD at the prices in force when the turn ended; absent when the model had no known prices. */
  costUsd?: number;
  /** When the turn ended, ms since the epoch. */
  completedAt: number;
}

/** The calendar month (UTC) of an instant, `YYYY-MM`. @param at ms since the epoch */
export function monthOf(at: number): string {
  return new Date(at).toISOString().slice(0, 7);
}

/** Totals of no turns. */
export function emptyTotals(): CostTotals {
  return { turns: 0, usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0, cachedInputTokens: 0, reasoningTokens: 0 }, costUsd: 0, unpricedTurns: 0 };
}

/** Adds one turn to totals (returns new totals; `totals` is not changed). */
export function addTurn(totals: CostTotals, record: Pick<TurnCostRecord, 'usage' | 'costUsd'>): CostTotals {
  const usage = record.usage;
  return {
    turns: totals.turns + 1,
    usage: {
      inputTokens: totals.usage.inputTokens + usage.inputTokens,
      outputTokens: totals.usage.outputTokens + usage.outputTokens,
      totalTokens: totals.usage.totalTokens + usage.totalTokens,
      cachedInputTokens: (totals.usage.cachedInputTokens ?? 0) + (usage.cachedInputTokens ?? 0),
      reasoningTokens: (totals.usage.reasoningTokens ?? 0) + (usage.reasoningTokens ?? 0),
    },
    costUsd: totals.costUsd + (record.costUsd ?? 0),
    unpricedTurns: totals.unpricedTurns + (record.costUsd === undefined ? 1 : 0),
  };
}

/** The turn cost records, and the totals added up from them. */
export class CostLedger {
  /**
   * Month totals of projects, `projectId month` → totals, read on every input of a project
   * with a pausing threshold and after every turn of a project with thresholds. Writes of
   * records and first reads of a total run one after another (`queue`), so a recorded turn is
   * added to a total read before it, and a total read after it already holds it: no record is
   * counted twice or missed.
   */
  private readonly projectMonths = new Map<string, CostTotals>();
  private readonly queue = new SerialQueue();

  private constructor(private readonly records: RecordStorage) {}

  /** Declares the namespace on the platform database. */
  static open(records: RecordStorage): CostLedger {
    records.defineNamespace({ name: TURN_COSTS, filterFields: ['conversationId', 'projectId', 'userId', 'month'] });
    return new CostLedger(records);
  }

  /**
   * Records a finished turn (a turn recorded again, e.g. after a retried write, replaces its record).
   * @throws Error from the database (the cached totals are then left as they were)
   */
  record(record: TurnCostRecord): Promise<void> {
    return this.queue.run(async () => {
      const previous = await this.records.get<TurnCostRecord>(TURN_COSTS, record.turnId);
      await this.records.set<TurnCostRecord>(TURN_COSTS, record.turnId, record, record.completedAt);
      const key = `${record.projectId} ${record.month}`;
      if (previous) {
        // A record written again is not counted again: the months it touches are read anew.
        this.projectMonths.delete(`${previous.value.projectId} ${previous.value.month}`);
        this.projectMonths.delete(key);
        return;
      }
      if (record.projectId === undefined) return;
      const cached = this.projectMonths.get(key);
      if (cached) this.projectMonths.set(key, addTurn(cached, record));
    });
  }

  /** The totals of a conversation, all time. */
  async conversationTotals(conversationId: string): Promise<CostTotals> {
    return sum(await listAll<TurnCostRecord>(this.records, TURN_COSTS, { conversationId }));
  }

  /** The totals of a project in a month (`YYYY-MM`, UTC); read from the database once, then kept up to date. */
  async projectMonthTotals(projectId: string, month: string): Promise<CostTotals> {
    const key = `${projectId} ${month}`;
    const cached = this.projectMonths.get(key);
    if (cached) return cached;
    return this.queue.run(async () => {
      const again = this.projectMonths.get(key);
      if (again) return again;
      const totals = sum(await listAll<TurnCostRecord>(this.records, TURN_COSTS, { projectId, month }));
      this.projectMonths.set(key, totals);
      return totals;
    });
  }

  /** The totals of a project in a month per user who started turns, by user id. */
  async projectMonthTotalsByUser(projectId: string, month: string): Promise<{ userId: string; totals: CostTotals }[]> {
    const byUser = new Map<string, CostTotals>();
    for (const record of await listAll<TurnCostRecord>(this.records, TURN_COSTS, { projectId, month })) byUser.set(record.userId, addTurn(byUser.get(record.userId) ?? emptyTotals(), record));
    return [...byUser.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([userId, totals]) => ({ userId, totals }));
  }

  /** The totals of a user in a month, across every project and conversation. */
  async userMonthTotals(userId: string, month: string): Promise<CostTotals> {
    return sum(await listAll<TurnCostRecord>(this.records, TURN_COSTS, { userId, month }));
  }
}

function sum(records: TurnCostRecord[]): CostTotals {
  return records.reduce(addTurn, emptyTotals());
}
