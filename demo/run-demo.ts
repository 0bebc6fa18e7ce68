/**
 * `npm run demo`: the whole product offline. Starts the mock model provider with a bundled
 * script, a real runtime server on a fresh data directory, and `openvaala exec` in a copy of
 * a small sample repository with a failing test. The scripted model runs the tests, reads the
 * code, patches it and runs the tests again. Exits 0 only if the sample's tests pass at the end.
 */
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { findServer } from '../src/cli/server-discovery.js';
import type { OpenVaalaPaths } from '../src/config/paths.js';
import { loadMockScript, MockProviderServer } from '../src/models/mock/index.js';
import { CLI_EXECUTABLE, PACKAGE_ROOT } from '../src/package-info.js';

const PROMPT = 'The tests of this project fail. Find out why, fix the code, and check that the tests pass.';

/** Prints a step's heading, in bold only on a terminal that takes colour (a log file gets plain text; NO_COLOR is honoured). */
function step(text: string): void {
  const bold = process.stdout.isTTY && process.env.NO_COLOR === undefined;
  process.stdout.write(bold ? `\n\x1b[1m== ${text}\x1b[0m\n` : `\n== ${text}\n`);
}

async function waitForServer(paths: OpenVaalaPaths, timeoutMs: number): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const info = await findServer(paths);
    if (info) return info.url;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`the runtime server did not answer within ${timeoutMs} ms`);
}

function runChild(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'inherit', 'inherit'] });
    child.once('error', reject);
    child.once('exit', (code) => resolve(code ?? 1));
  });
}

async function main(): Promise<number> {
  const started = performance.now();
  const root = mkdtempSync(path.join(os.tmpdir(), 'openvaala-demo-'));
  const paths: OpenVaalaPaths = { configDir: path.join(root, 'config', 'openvaala'), dataDir: path.join(root, 'data', 'openvaala'), stateDir: path.join(root, 'state', 'openvaala') };
  const env = { ...process.env, XDG_CONFIG_HOME: path.join(root, 'config'), XDG_DATA_HOME: path.join(root, 'data'), XDG_STATE_HOME: path.join(root, 'state') };
  const sample = path.join(root, 'work', 'sample-cart');
  cpSync(path.join(PACKAGE_ROOT, 'demo', 'sample-repo'), sample, { recursive: true });

  step('Starting the mock model provider (OpenAI Responses API over HTTP, scripted)');
  const mock = new MockProviderServer(await loadMockScript(path.join(PACKAGE_ROOT, 'demo', 'mock-script.yaml')));
  const { baseURL } = await mock.start({ port: 0 });
  mkdirSync(paths.configDir, { recursive: true });
  writeFileSync(
    path.join(paths.configDir, 'providers.yaml'),
    `# Written by the demo: the scripted mock model, spoken to over the OpenAI Responses API.\nproviders:\n  mock: { kind: openai, baseURL: ${baseURL}, apiKey: none }\ndefaultModel: mock/mock-model\n`,
  );
  process.stdout.write(`mock provider at ${baseURL}\n`);

  step('Starting the runtime server (openvaala serve)');
  const server = spawn(process.execPath, [CLI_EXECUTABLE, 'serve', '--port', '0'], { env, stdio: ['ignore', 'inherit', 'pipe'] });
  let serverLog = '';
  server.stderr.on('data', (chunk: Buffer) => (serverLog += chunk.toString()));
  let testsPass: boolean;
  let execCode: number;
  try {
    await waitForServer(paths, 15_000);

    step(`Sample repository: ${sample}`);
    const before = spawnSync(process.execPath, ['--test'], { cwd: sample, encoding: 'utf8' });
    process.stdout.write(`its tests before: ${before.status === 0 ? 'pass' : 'FAIL'}\n`);

    step(`openvaala exec "${PROMPT}"`);
    execCode = await runChild(process.execPath, [CLI_EXECUTABLE, 'exec', PROMPT], { cwd: sample, env });

    step('Checking the sample repository');
    const after = spawnSync(process.execPath, ['--test'], { cwd: sample, encoding: 'utf8' });
    testsPass = after.status === 0;
    process.stdout.write(`its tests after: ${testsPass ? 'pass' : 'FAIL'}\n${testsPass ? '' : after.stdout}`);
  } finally {
    server.kill('SIGTERM');
    await new Promise((resolve) => server.once('exit', resolve));
    await mock.stop();
  }

  step('Where the conversation is stored');
  const conversations = path.join(paths.dataDir, 'conversations');
  for (const conversation of readdirSync(conversations)) {
    process.stdout.write(`${path.join(conversations, conversation)}/\n`);
    for (const file of readdirSync(path.join(conversations, conversation))) process.stdout.write(`  ${file}\n`);
  }
  process.stdout.write(`data dir: ${paths.dataDir}\nkept for a look: ${root} (its configuration, data and sample copy; delete it when done)\nexec exit code: ${execCode}; model requests served: ${mock.requests.length}; wall time ${((performance.now() - started) / 1000).toFixed(1)} s\n`);
  if (execCode !== 0 && serverLog) process.stderr.write(`server log:\n${serverLog}\n`);
  return testsPass && execCode === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: Error) => {
    process.stderr.write(`demo failed: ${error.stack ?? error.message}\n`);
    process.exit(1);
  },
);
