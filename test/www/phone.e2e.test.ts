/**
 * The web UI in Chromium at phone size (390×844) against a real `openvaala serve` with the mock
 * provider: sign-in through the printed link, a conversation's whole life, approvals across
 * tabs, queue, steer, interrupt, fork, rewind, rename, delete, the terminal and the files, with
 * axe-core on the main views and screenshots under test/artifacts/.
 */
import { afterAll, beforeAll, describe, it } from 'vitest';
import type { Page } from 'playwright-core';
import { MockProviderServer, parseMockScript } from '../../src/models/mock/index.js';
import { AGENTS_YAML, approvalFromAnotherTab, attachmentMentionReview, CHILD_SCRIPT, firstTurn, FLOW_SCRIPT, forkRewindRenameDelete, queueSteerInterrupt, settingsPage, terminalDrawer } from './flows.js';
import { startWebSession, type WebSession } from './web-session.js';

const PREFIX = 'phone';
const VIEWPORT = { width: 390, height: 844 };

describe(`web UI at ${VIEWPORT.width}×${VIEWPORT.height}, light theme`, { timeout: 120_000 }, () => {
  let web: WebSession;
  let child: MockProviderServer;
  let page: Page;
  let conversationId: string;

  beforeAll(async () => {
    child = new MockProviderServer(parseMockScript(CHILD_SCRIPT, 'child.yaml'));
    const childURL = (await child.start({ port: 0 })).baseURL;
    web = await startWebSession({
      script: FLOW_SCRIPT,
      viewport: VIEWPORT,
      // The phone runs in the light theme, the desktop in the dark one: axe checks both.
      colorScheme: 'light',
      configFiles: { 'agents.yaml': AGENTS_YAML },
      providersYaml: (baseURL) => `providers:\n  mock: { kind: openai, baseURL: ${baseURL}, apiKey: none }\n  child: { kind: openai, baseURL: ${childURL}, apiKey: none }\ndefaultModel: mock/mock-model\n`,
    });
  }, 60_000);
  afterAll(async () => {
    await web?.stop();
    await child?.stop();
  });

  it('creates a conversation and shows the streamed answer, a plan, a live command, a patch diff and a subagent', async () => {
    ({ page, conversationId } = await firstTurn(web, PREFIX));
  });

  it('asks for approval in every tab, takes the answer from the second and shows the same transcript there', async () => {
    await approvalFromAnotherTab(web, page, conversationId, PREFIX);
  });

  it('sends an attachment with an @-mention of a file, and line comments on a diff as a review', async () => {
    await attachmentMentionReview(page);
  });

  it('queues and withdraws an input, steers the running turn and interrupts it', async () => {
    await queueSteerInterrupt(web, page, PREFIX);
  });

  it('opens a terminal on the executor, the workspace files and the git history', async () => {
    await terminalDrawer(web, page, conversationId, PREFIX);
  });

  it('forks from an item, rewinds the fork, renames and deletes it', async () => {
    await forkRewindRenameDelete(web, page, conversationId);
  });

  it('shows the settings', async () => {
    await settingsPage(page, PREFIX);
  });
});
