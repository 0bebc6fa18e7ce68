/**
 * Costs of a server's turns (docs/platform.md, "Costs and thresholds"): who started each turn,
 * the ledger of finished turns, and each project's monthly thresholds (namespace
 * `project_cost_thresholds` of the platform database, mirrored in memory), which warn when a
 * turn brings the month's total to them and, for `pauseUsd`, refuse new turns after that.
 */
import type { CostThresholds, CostTotals, Turn } from '../../protocol/index.js';
import type { RecordStorage } from '../../storage/record-storage.js';
import { PlatformConflictError, PlatformInputError } from '../platform-errors.js';
import { listAll } from '../projects/project-store.js';
import { CostLedger, monthOf, UNATTRIBUTED_USER, type TurnCostRecord } from './cost-ledger.js';

/** The namespace of the thresholds in the platform database. */
export const PROJECT_COST_THRESHOLDS = 'project_cost_thresholds';

/** Turns whose starter is remembered until they end; the oldest is forgotten beyond this. */
const MAX_ATTRIBUTED_TURNS = 10_000;

interface StoredThresholds extends CostThresholds {
  projectId: string;
}

/** A threshold a finished turn brought its project's month total to. */
export interface ThresholdCrossing {
  projectId: string;
  month: string;
  action: 'warn' | 'pause';
  thresholdUsd: number;
  totalUsd: number;
}

/**
 * Thrown when a project's month total has reached its `pauseUsd`: no new turn starts in its
 * conversations until the month ends or a manager raises or removes the threshold.
 */
export class CostLimitReachedError extends PlatformConflictError {
  constructor(
    readonly projectId: string,
    readonly month: string,
    readonly totalUsd: number,
    readonly pauseUsd: number,
    projectName?: string,
  ) {
    super('cost_limit_reached', `project ${projectName !== undefined ? `"${projectName}" (${projectId})` : projectId} has spent ${formatUsd(totalUsd)} in ${month} (UTC), reaching its pausing threshold costs.pauseUsd of ${formatUsd(pauseUsd)}; new turns are refused until the month ends or a project manager raises the threshold (costs/setThresholds)`);
    this.name = 'CostLimitReachedError';
  }
}

/** USD with cents, and more digits for amounts under a cent. */
export function formatUsd(amount: number): string {
  return `$${amount >= 0.01 || amount === 0 ? amount.toFixed(2) : amount.toPrecision(2)}`;
}

/** The ledger, the thresholds and the attribution of turns to users. */
export class CostAccounting {
  /** turnId → who started it. */
  private readonly starters = new Map<string, string>();

  private constructor(
    private readonly records: RecordStorage,
    /** The ledger of finished turns. */
    readonly ledger: CostLedger,
    private readonly thresholds: Map<string, CostThresholds>,
    private readonly now: () => number,
  ) {}

  /**
   * Declares the namespaces and loads the thresholds.
   * @param now the clock, ms since the epoch (months are read from it in UTC)
   * @throws Error from the database
   */
  static async open(records: RecordStorage, now: () => number = Date.now): Promise<CostAccounting> {
    const ledger = CostLedger.open(records);
    records.defineNamespace({ name: PROJECT_COST_THRESHOLDS });
    const thresholds = new Map<string, CostThresholds>();
    for (const { projectId, ...stored } of await listAll<StoredThresholds>(records, PROJECT_COST_THRESHOLDS)) thresholds.set(projectId, stored);
    return new CostAccounting(records, ledger, thresholds, now);
  }

  /** The current calendar month (UTC), `YYYY-MM`. */
  currentMonth(): string {
    return monthOf(this.now());
  }

  /** Notes who started a turn (`local-owner` or a user id), so its cost counts for them when it ends. */
  attribute(turnId: string, userId: string): void {
    if (this.starters.size >= MAX_ATTRIBUTED_TURNS) this.starters.delete(this.starters.keys().next().value!);
    this.starters.set(turnId, userId);
  }

  /** A project's thresholds ({} when none are set). */
  thresholdsOf(projectId: string): CostThresholds {
    return { ...this.thresholds.get(projectId) };
  }

  /**
   * Changes a project's thresholds: a number sets one, `null` removes it, undefined keeps it.
   * @returns the thresholds now in force
   * @throws PlatformInputError (field `warnUsd`) when the warning threshold would be above the pausing one
   * @throws Error from the database (the thresholds in force stay as they were)
   */
  async setThresholds(projectId: string, changes: { warnUsd?: number | null | undefined; pauseUsd?: number | null | undefined }): Promise<CostThresholds> {
    const current = this.thresholdsOf(projectId);
    const next: CostThresholds = {};
    const warnUsd = changes.warnUsd === undefined ? current.warnUsd : (changes.warnUsd ?? undefined);
    const pauseUsd = changes.pauseUsd === undefined ? current.pauseUsd : (changes.pauseUsd ?? undefined);
    if (warnUsd !== undefined) next.warnUsd = warnUsd;
    if (pauseUsd !== undefined) next.pauseUsd = pauseUsd;
    if (warnUsd !== undefined && pauseUsd !== undefined && warnUsd > pauseUsd) {
      throw new PlatformInputError('warnUsd', `the warning threshold (${warnUsd} USD) must not be above the pausing threshold (${pauseUsd} USD)`);
    }
    if (next.warnUsd === undefined && next.pauseUsd === undefined) {
      await this.records.delete(PROJECT_COST_THRESHOLDS, projectId);
      this.thresholds.delete(projectId);
    } else {
      await this.records.set<StoredThresholds>(PROJECT_COST_THRESHOLDS, projectId, { projectId, ...next });
      this.thresholds.set(projectId, next);
    }
    return { ...next };
  }

  /** Forgets a deleted project's thresholds (its ledger records stay: they are its users' spending too). */
  async forgetProject(projectId: string): Promise<void> {
    if (!this.thresholds.has(projectId)) return;
    await this.records.delete(PROJECT_COST_THRESHOLDS, projectId);
    this.thresholds.delete(projectId);
  }

  /**
   * Where a project stands this month: its total and whether it reached its thresholds.
   * @param month `YYYY-MM` (default: the current month)
   */
  async standing(projectId: string, month = this.currentMonth()): Promise<{ totals: CostTotals; thresholds: CostThresholds; warning: boolean; paused: boolean }> {
    const totals = await this.ledger.projectMonthTotals(projectId, month);
    const thresholds = this.thresholdsOf(projectId);
    return { totals, thresholds, warning: reached(totals.costUsd, thresholds.warnUsd), paused: reached(totals.costUsd, thresholds.pauseUsd) };
  }

  /**
   * Refuses a new turn of a project whose month total reached its `pauseUsd` (turns running
   * now are not touched). Conversations outside every project are never refused.
   * @param projectName the project's name, for the error message
   * @throws CostLimitReachedError naming the project, the month, its total and the threshold
   */
  async checkNewTurn(projectId: string | undefined, projectName?: string): Promise<void> {
    if (projectId === undefined) return;
    const pauseUsd = this.thresholds.get(projectId)?.pauseUsd;
    if (pauseUsd === undefined) return;
    const month = this.currentMonth();
    const total = (await this.ledger.projectMonthTotals(projectId, month)).costUsd;
    if (reached(total, pauseUsd)) throw new CostLimitReachedError(projectId, month, total, pauseUsd, projectName);
  }

  /**
   * Records a finished turn in the ledger, counted for whoever started it.
   * @param projectId the turn's conversation's project, if any
   * @returns the thresholds of the project this turn brought its month total to (each crossed once: from below to at or above)
   * @throws Error from the database
   */
  async recordTurn(turn: Turn, projectId: string | undefined): Promise<ThresholdCrossing[]> {
    const completedAt = turn.completedAt ?? this.now();
    const record: TurnCostRecord = {
      turnId: turn.id,
      conversationId: turn.conversationId,
      ...(projectId !== undefined ? { projectId } : {}),
      userId: this.starters.get(turn.id) ?? UNATTRIBUTED_USER,
      month: monthOf(completedAt),
      ...(turn.model !== undefined ? { model: turn.model } : {}),
      usage: turn.usage,
      ...(turn.costUsd !== undefined ? { costUsd: turn.costUsd } : {}),
      completedAt,
    };
    await this.ledger.record(record);
    this.starters.delete(turn.id);
    if (projectId === undefined || !turn.costUsd) return [];
    const thresholds = this.thresholds.get(projectId);
    if (!thresholds) return [];
    const after = (await this.ledger.projectMonthTotals(projectId, record.month)).costUsd;
    const before = after - turn.costUsd;
    const crossings: ThresholdCrossing[] = [];
    for (const action of ['warn', 'pause'] as const) {
      const thresholdUsd = action === 'warn' ? thresholds.warnUsd : thresholds.pauseUsd;
      if (thresholdUsd !== undefined && !reached(before, thresholdUsd) && reached(after, thresholdUsd)) crossings.push({ projectId, month: record.month, action, thresholdUsd, totalUsd: after });
    }
    return crossings;
  }
}

function reached(total: number, threshold: number | undefined): boolean {
  // A hair of tolerance: totals are sums of floating-point costs.
  return threshold !== undefined && total >= threshold - 1e-9;
}
