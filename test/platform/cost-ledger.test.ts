/**
 * The cost ledger and thresholds on a real SQLite record storage: months in UTC, cached
 * project totals kept exact as turns are recorded (a turn recorded twice counted once),
 * totals and thresholds surviving a reopen, a threshold crossed once, and the refusal naming
 * the project, month, total and threshold.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { CostAccounting, CostLimitReachedError } from '../../src/platform/costs/cost-accounting.js';
import { CostLedger, monthOf, type TurnCostRecord } from '../../src/platform/costs/cost-ledger.js';
import type { Turn } from '../../src/protocol/index.js';
import { SqliteRecordStorage } from '../../src/storage/sqlite/sqlite-record-storage.js';

const directories: string[] = [];
const storages: SqliteRecordStorage[] = [];
afterEach(async () => {
  for (const storage of storages.splice(0)) await storage.close();
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
});

function databaseFile(): string {
  const directory = mkdtempSync(path.join(os.tmpdir(), 'openvaala-costs-'));
  directories.push(directory);
  return path.join(directory, 'platform.db');
}

function open(file: string): SqliteRecordStorage {
  const storage = new SqliteRecordStorage(file);
  storages.push(storage);
  return storage;
}

const JANUARY_END = Date.UTC(2026, 0, 31, 23, 59, 59);
const FEBRUARY_START = Date.UTC(2026, 1, 1, 0, 0, 0);

function record(turnId: string, costUsd: number | undefined, completedAt = JANUARY_END, projectId = 'proj_a'): TurnCostRecord {
  return { turnId, conversationId: 'conv_a', projectId, userId: 'alice', month: monthOf(completedAt), usage: { inputTokens: 100, outputTokens: 10, totalTokens: 110 }, ...(costUsd !== undefined ? { costUsd } : {}), completedAt };
}

function turn(id: string, costUsd: number, completedAt: number): Turn {
  return { id, sessionId: 'sess_a', conversationId: 'conv_a', status: 'completed', steps: 1, usage: { inputTokens: 100, outputTokens: 10, totalTokens: 110 }, costUsd, startedAt: completedAt - 1000, completedAt };
}

describe('cost ledger', () => {
  it('reads months in UTC and keeps cached project totals exact as turns are recorded', async () => {
    expect(monthOf(JANUARY_END)).toBe('2026-01');
    expect(monthOf(FEBRUARY_START)).toBe('2026-02');
    const file = databaseFile();
    const ledger = CostLedger.open(open(file));
    await ledger.record(record('turn_1', 0.5));
    expect((await ledger.projectMonthTotals('proj_a', '2026-01')).costUsd).toBe(0.5);
    await ledger.record(record('turn_2', 0.25));
    // A turn recorded again replaces its record: it is not counted twice.
    await ledger.record(record('turn_2', 0.25));
    await ledger.record(record('turn_3', undefined));
    await ledger.record(record('turn_4', 0.125, FEBRUARY_START));
    expect(await ledger.projectMonthTotals('proj_a', '2026-01')).toMatchObject({ turns: 3, costUsd: 0.75, unpricedTurns: 1, usage: { inputTokens: 300, totalTokens: 330 } });
    expect((await ledger.projectMonthTotals('proj_a', '2026-02')).costUsd).toBe(0.125);
    expect((await ledger.userMonthTotals('alice', '2026-01')).turns).toBe(3);
    expect((await ledger.conversationTotals('conv_a')).costUsd).toBe(0.875);

    // Reads made at the same time as writes agree with a fresh read from the database.
    await Promise.all([ledger.record(record('turn_5', 1)), ledger.projectMonthTotals('proj_b', '2026-01'), ledger.record(record('turn_6', 2, JANUARY_END, 'proj_b')), ledger.projectMonthTotals('proj_a', '2026-01')]);
    const reopened = CostLedger.open(open(file));
    for (const project of ['proj_a', 'proj_b']) expect(await ledger.projectMonthTotals(project, '2026-01')).toEqual(await reopened.projectMonthTotals(project, '2026-01'));
  });

  it('keeps thresholds across a reopen, reports each crossing once, and refuses new turns past the pause', async () => {
    const file = databaseFile();
    let now = JANUARY_END - 60_000;
    const costs = await CostAccounting.open(open(file), () => now);
    await costs.setThresholds('proj_a', { warnUsd: 1, pauseUsd: 2 });
    costs.attribute('turn_1', 'alice');
    expect(await costs.recordTurn(turn('turn_1', 0.5, now), 'proj_a')).toEqual([]);
    expect(await costs.recordTurn(turn('turn_2', 0.75, now), 'proj_a')).toEqual([{ projectId: 'proj_a', month: '2026-01', action: 'warn', thresholdUsd: 1, totalUsd: 1.25 }]);
    expect(await costs.recordTurn(turn('turn_3', 0.25, now), 'proj_a')).toEqual([]);
    await costs.checkNewTurn('proj_a', 'Alpha');
    expect((await costs.recordTurn(turn('turn_4', 1, now), 'proj_a')).map((crossing) => crossing.action)).toEqual(['pause']);
    const refusal = await costs.checkNewTurn('proj_a', 'Alpha').then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refusal).toBeInstanceOf(CostLimitReachedError);
    expect((refusal as CostLimitReachedError).reason).toBe('cost_limit_reached');
    expect((refusal as Error).message).toBe('project "Alpha" (proj_a) has spent $2.50 in 2026-01 (UTC), reaching its pausing threshold costs.pauseUsd of $2.00; new turns are refused until the month ends or a project manager raises the threshold (costs/setThresholds)');
    // Conversations outside every project are never refused.
    await costs.checkNewTurn(undefined);
    expect((await costs.ledger.projectMonthTotalsByUser('proj_a', '2026-01')).map((entry) => entry.userId)).toEqual(['alice', 'unattributed']);

    // A new month starts from nothing; the thresholds are kept in the database.
    now = FEBRUARY_START;
    await costs.checkNewTurn('proj_a');
    const reopened = await CostAccounting.open(open(file), () => now);
    expect(reopened.thresholdsOf('proj_a')).toEqual({ warnUsd: 1, pauseUsd: 2 });
    expect(await reopened.setThresholds('proj_a', { pauseUsd: null })).toEqual({ warnUsd: 1 });
    expect(await reopened.setThresholds('proj_a', { warnUsd: null })).toEqual({});
    expect((await CostAccounting.open(open(file))).thresholdsOf('proj_a')).toEqual({});
  });
});
