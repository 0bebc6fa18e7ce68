/**
 * Starting a real server (127.0.0.1, free port, mock provider) whose default agent is the
 * test's ACP agent (test/fixtures/acp-agent.mjs) run as `kind: acp`.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startInProcessServer, type InProcessServer } from '../../helpers/in-process-server.js';

/** The test's ACP agent script. */
export const ACP_AGENT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'fixtures', 'acp-agent.mjs');

/** Starts a server whose default agent `tester` is the test's ACP agent; `extra` is appended to its definition (indented keys). */
export async function startWithAcpAgent(extra = ''): Promise<InProcessServer> {
  const agents = `agents:\n  tester:\n    default: true\n    kind: acp\n    command: [${JSON.stringify(process.execPath)}, ${JSON.stringify(ACP_AGENT)}]\n${extra}`;
  return startInProcessServer('responses: []\n', { beforeStart: (environment) => writeFileSync(path.join(environment.paths.configDir, 'agents.yaml'), agents) });
}
