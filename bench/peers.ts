/**
 * `npm run bench:peers` (not part of `npm run bench`: it installs the Codex CLI on first use):
 * the same W20 turn — 20 steps, each one shell command `echo N`, then a final text — through
 * OpenVaala and through the Codex CLI (`codex exec --json`, version of
 * `scripts/install-codex.sh`), both pointed at the same mock provider (OpenAI Responses SSE on
 * `POST /v1/responses`) in this process. Runs alternate, five each after one warm-up each; the
 * medians and their ratio are printed.
 *
 * OpenVaala runs as `openvaala exec` against an already running `openvaala serve` (its normal
 * use); Codex as one process (its normal use). Codex gets a temporary `CODEX_HOME` whose
 * `config.toml` names the mock as its only model provider, never asks for approval and runs
 * commands without a sandbox, as OpenVaala's local executor does. Each turn is checked on the
 * model side: the last request of a turn must carry all 20 tool outputs, each with its number.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { MockProviderServer } from '../src/models/mock/index.js';
import { createBenchHome, loadAverage, runExec, runProcess, startMockFor, startServe, type BenchHome } from './server-process.js';
import { median, printTable } from './statistics.js';

const STEPS = 20;
const RUNS = 5;
const here = path.dirname(fileURLToPath(import.meta.url));

/** The agents compared, in the order each pair of runs uses them. */
type Agent = 'openvaala' | 'codex';

/** Script entries of one W20 turn for `agent`: the shell tool of both is `exec_command`, whose command argument is `command` in OpenVaala and `cmd` in Codex. */
function turnEntries(agent: Agent): string[] {
  const argument = agent === 'openvaala' ? 'command' : 'cmd';
  const lines: string[] = [];
  for (let step = 1; step <= STEPS; step++) {
    lines.push(`  - text: "step ${step}"`, '    toolCalls:', `      - { name: exec_command, arguments: { ${argument}: "echo ${step}" } }`);
  }
  lines.push('  - text: "done"');
  return lines;
}

/** Installs (once) and finds the Codex CLI through the repository's script. @throws Error when the script fails */
function codexBinary(): string {
  const script = path.resolve(here, '../../scripts/install-codex.sh');
  const result = spawnSync('bash', [script], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (result.status !== 0) throw new Error(`install-codex.sh failed: ${result.stderr}`);
  return result.stdout.trim().split('\n').at(-1) ?? '';
}

/** A `CODEX_HOME` whose configuration sends every model request to the mock and runs commands unasked, unsandboxed. */
function codexHome(home: BenchHome, baseURL: string): string {
  const codexHomeDir = path.join(home.root, 'codex-home');
  mkdirSync(codexHomeDir, { recursive: true });
  writeFileSync(
    path.join(codexHomeDir, 'config.toml'),
    [
      'model = "mock-model"',
      'model_provider = "mock"',
      'approval_policy = "never"',
      'sandbox_mode = "danger-full-access"',
      'check_for_update_on_startup = false',
      '',
      '[model_providers.mock]',
      'name = "mock"',
      `base_url = "${baseURL}"`,
      'wire_api = "responses"',
      '',
    ].join('\n'),
  );
  return codexHomeDir;
}

/**
 * Checks on the model side that a turn ran every command: the turn made STEPS + 1 requests and
 * the last one carries STEPS `function_call_output` items, the n-th holding the line `n` that `echo n` printed.
 * @throws Error naming the agent and what is missing
 */
function checkTurn(agent: Agent, mock: MockProviderServer, first: number): void {
  const requests = mock.requests.slice(first);
  if (requests.length !== STEPS + 1) throw new Error(`${agent}: expected ${STEPS + 1} model requests in the turn, got ${requests.length}`);
  const input = (requests.at(-1)?.body as { input?: { type?: string; output?: unknown }[] }).input ?? [];
  const outputs = input.filter((item) => item.type === 'function_call_output').map((item) => (typeof item.output === 'string' ? item.output : JSON.stringify(item.output)));
  if (outputs.length !== STEPS) throw new Error(`${agent}: the last request carries ${outputs.length} tool outputs, expected ${STEPS}`);
  outputs.forEach((output, index) => {
    if (!new RegExp(`(^|\\n)${index + 1}\\n`).test(output)) throw new Error(`${agent}: tool output ${index + 1} lacks its number: ${output.slice(0, 200)}`);
  });
}

/** Runs the benchmark and prints its table. */
export async function runPeersBenchmark(): Promise<void> {
  const codex = codexBinary();
  const version = spawnSync(codex, ['--version'], { encoding: 'utf8' }).stdout.trim();
  const home = createBenchHome('peers');
  // One warm-up pair, then RUNS pairs; each pair runs OpenVaala first, then Codex.
  const pairs = RUNS + 1;
  const script = ['responses:', ...Array.from({ length: pairs }, () => [...turnEntries('openvaala'), ...turnEntries('codex')]).flat()].join('\n');
  const { mock, baseURL } = await startMockFor(home, script);
  const server = await startServe(home);
  const codexEnv = { ...process.env, CODEX_HOME: codexHome(home, baseURL) };
  try {
    console.log(`load average at start: ${loadAverage()}; ${version}`);
    const times: Record<Agent, number[]> = { openvaala: [], codex: [] };
    for (let pair = 0; pair < pairs; pair++) {
      let first = mock.requests.length;
      const { wallMs } = await runExec(home, `run the ${STEPS} steps`);
      checkTurn('openvaala', mock, first);
      first = mock.requests.length;
      const started = performance.now();
      const result = await runProcess(codex, ['exec', '--json', '--skip-git-repo-check', '-C', home.work, `run the ${STEPS} steps`], { cwd: home.work, env: codexEnv });
      const codexMs = performance.now() - started;
      if (result.status !== 0) throw new Error(`codex exec exited ${String(result.status)}: ${result.stderr}`);
      checkTurn('codex', mock, first);
      if (pair === 0) continue;
      times.openvaala.push(wallMs);
      times.codex.push(codexMs);
    }
    const openvaala = median(times.openvaala);
    const codexMedian = median(times.codex);
    const seconds = (values: number[]) => values.map((ms) => (ms / 1000).toFixed(2)).join(', ');
    printTable(`W20 turn (${STEPS} x exec_command "echo N"), whole run of the command, median of ${RUNS} alternating runs after one warm-up each`, [
      ['Codex CLI: codex exec --json (one process)', `${(codexMedian / 1000).toFixed(2)} s (runs: ${seconds(times.codex)})`],
      ['OpenVaala: openvaala exec --json (server already running)', `${(openvaala / 1000).toFixed(2)} s (runs: ${seconds(times.openvaala)})`],
      ['OpenVaala / Codex', `${(openvaala / codexMedian).toFixed(2)}x`],
    ]);
  } finally {
    await server.stop();
    await mock.stop();
    home.remove();
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  runPeersBenchmark().catch((error: Error) => {
    console.error(error.stack ?? error.message);
    process.exit(1);
  });
}
