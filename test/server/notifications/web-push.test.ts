/**
 * Web Push end to end (docs/notifications.md): a real server, real turns against the mock
 * model, and a stand-in push service on 127.0.0.1 that verifies the VAPID JWT (ES256 against
 * the key in the header, aud, exp) and decrypts the aes128gcm payload with the browser's keys
 * (test/helpers/push-service.ts). A person is notified only while none of their clients is
 * subscribed to the conversation; a subscription the push service says is gone is removed.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RuntimeClient } from '../../../src/client/runtime-client.js';
import { PushPayloadSchema, type PushPayload } from '../../../src/protocol/index.js';
import { approvalPolicyYaml } from '../../helpers/approval-policy.js';
import { startInProcessServer, type InProcessServer } from '../../helpers/in-process-server.js';
import { startPushService, type PushService } from '../../helpers/push-service.js';
import { createTestEnvironment } from '../../helpers/environment.js';
import { startPlatformServer, type PlatformHarness } from '../../platform/two-users.js';

let harness: InProcessServer | undefined;
let pushService: PushService | undefined;
let platform: PlatformHarness | undefined;
afterEach(async () => {
  await harness?.stop();
  await platform?.stop();
  platform = undefined;
  await pushService?.close();
  harness = undefined;
  pushService = undefined;
});

const SERVER_YAML = 'notifications:\n  push: { allowLoopbackEndpoints: true, subject: "mailto:ops@example.org", ttlSeconds: 600 }\n';

/** Starts a server with loopback push services allowed and a stand-in push service. */
async function start(script: string, agentsYaml?: string): Promise<{ harness: InProcessServer; push: PushService }> {
  pushService = await startPushService();
  harness = await startInProcessServer(script, {
    beforeStart: (environment) => {
      writeFileSync(path.join(environment.paths.configDir, 'server.yaml'), SERVER_YAML);
      if (agentsYaml) writeFileSync(path.join(environment.paths.configDir, 'agents.yaml'), agentsYaml);
    },
  });
  return { harness, push: pushService };
}

function payloads(push: PushService): PushPayload[] {
  return push.received.map((message) => PushPayloadSchema.parse(JSON.parse(message.plaintext)));
}

describe('Web Push', () => {
  it('a turn that completes with no client attached reaches the subscribed browser, signed and encrypted; not while a client is subscribed; a 410 removes the subscription', async () => {
    const { harness, push } = await start(`
responses:
  - text: "The build is green."
  - text: "Second answer, watched."
  - text: "Third answer, nobody watching."
  - text: "Fourth answer."
`);
    const { client } = harness;
    const { publicKey } = await client.request('notifications/publicKey', {});
    expect(Buffer.from(publicKey, 'base64url')).toHaveLength(65);
    // The key is made once and kept.
    expect((await client.request('notifications/publicKey', {})).publicKey).toBe(publicKey);
    const { subscription } = await client.request('notifications/subscribe', { subscription: push.subscribe('laptop'), deviceName: 'Laptop' });
    expect(subscription).toMatchObject({ id: expect.stringMatching(/^push_[0-9a-f]{32}$/), endpoint: `${push.origin}/push/laptop`, deviceName: 'Laptop' });

    // No client subscribed to the conversation: the person is away.
    const { conversation } = await client.request('conversation/create', { cwd: harness.environment.workDir, title: 'Release checks' });
    await client.request('session/input', { conversationId: conversation.id, input: 'is the build green?' });
    await expect.poll(() => push.received.length, { timeout: 20_000 }).toBe(1);
    expect(push.rejected).toEqual([]);
    const [first] = push.received;
    expect(first).toMatchObject({ subscription: 'laptop', vapidPublicKey: publicKey, ttl: 600, claims: { aud: push.origin, sub: 'mailto:ops@example.org' } });
    expect(payloads(push)[0]).toEqual({ kind: 'turn_completed', conversationId: conversation.id, title: 'Release checks', text: 'The build is green.', url: `#/c/${conversation.id}`, at: expect.any(Number) });

    // A client subscribed to the conversation: nothing is pushed for its turn.
    await client.request('conversation/subscribe', { conversationId: conversation.id });
    await client.request('session/input', { conversationId: conversation.id, input: 'again' });
    await harness.turnsCompleted(1);
    await client.request('conversation/unsubscribe', { conversationId: conversation.id });
    await client.request('session/input', { conversationId: conversation.id, input: 'and again' });
    await expect.poll(() => push.received.length, { timeout: 20_000 }).toBe(2);
    // The watched turn's message would have been sent before this one: only the unwatched one came.
    expect(payloads(push).map((payload) => payload.text)).toEqual(['The build is green.', 'Third answer, nobody watching.']);

    // The push service says the subscription is gone: it is removed.
    push.answerWith = 410;
    await client.request('session/input', { conversationId: conversation.id, input: 'once more' });
    await expect.poll(async () => (await client.request('notifications/list', {})).subscriptions, { timeout: 20_000 }).toEqual([]);
    expect(push.received).toHaveLength(3);
  });

  it('a tool call waiting for approval and a question waiting for an answer are pushed with their text', async () => {
    const { harness, push } = await start(
      `
responses:
  - toolCalls: [{ name: exec_command, arguments: { command: "echo deploy" } }]
  - toolCalls: [{ name: request_user_input, arguments: { question: "Which environment?", choices: ["staging", "production"], allow_free_text: false } }]
  - text: "done"
`,
      approvalPolicyYaml(['{ tool: exec_command, decision: ask }']),
    );
    // The web UI of another device is this subscriber; the harness client stays away from the conversation.
    await harness.client.request('notifications/subscribe', { subscription: push.subscribe('phone') });
    const { conversation } = await harness.client.request('conversation/create', { cwd: harness.environment.workDir });
    await harness.client.request('session/input', { conversationId: conversation.id, input: 'deploy it' });
    await expect.poll(() => payloads(push).map((payload) => payload.kind), { timeout: 20_000 }).toEqual(['approval_requested']);
    expect(payloads(push)[0]?.text).toMatch(/^Approval needed: exec_command/);
    const { sessions } = await harness.client.request('conversation/get', { conversationId: conversation.id });
    await harness.client.request('approval/respond', { conversationId: conversation.id, approvalId: sessions[0]!.pendingApprovals[0]!.approvalId, decision: 'allow_once' });
    await expect.poll(() => payloads(push).map((payload) => payload.kind), { timeout: 20_000 }).toEqual(['approval_requested', 'input_requested']);
    expect(payloads(push)[1]?.text).toBe('Question: Which environment?');
    expect(push.rejected).toEqual([]);
  });

  it('a failed turn is pushed with its error', async () => {
    const { harness, push } = await start('responses:\n  - error: { status: 400, message: "the prompt is too long" }\n');
    await harness.client.request('notifications/subscribe', { subscription: push.subscribe('laptop') });
    const { conversation } = await harness.client.request('conversation/create', { cwd: harness.environment.workDir });
    await harness.client.request('session/input', { conversationId: conversation.id, input: 'a very long prompt' });
    await expect.poll(() => payloads(push).map((payload) => payload.kind), { timeout: 20_000 }).toEqual(['turn_failed']);
    expect(payloads(push)[0]?.text).toMatch(/^The turn failed: .*the prompt is too long/);
  });

  it('subscriptions are the caller\'s own: another connection of the same owner lists and removes them, by id or endpoint', async () => {
    const { harness, push } = await start('responses: []\n');
    const other = await RuntimeClient.connect({ url: harness.server.url, token: harness.server.token, clientName: 'other' });
    try {
      const laptop = push.subscribe('laptop');
      const { subscription } = await harness.client.request('notifications/subscribe', { subscription: laptop });
      await harness.client.request('notifications/subscribe', { subscription: push.subscribe('phone') });
      // The same browser subscribing again replaces its record.
      await harness.client.request('notifications/subscribe', { subscription: laptop, deviceName: 'Laptop' });
      expect((await other.request('notifications/list', {})).subscriptions.map((each) => each.endpoint).sort()).toEqual([`${push.origin}/push/laptop`, `${push.origin}/push/phone`]);
      expect(await other.request('notifications/unsubscribe', { subscriptionId: subscription.id })).toEqual({ removed: true });
      expect(await other.request('notifications/unsubscribe', { subscriptionId: subscription.id })).toEqual({ removed: false });
      expect(await other.request('notifications/unsubscribe', { endpoint: `${push.origin}/push/phone` })).toEqual({ removed: true });
      expect((await harness.client.request('notifications/list', {})).subscriptions).toEqual([]);
    } finally {
      await other.close();
    }
  });

  it('in platform mode only people who may read the conversation are notified, and project secrets never leave in a payload', async () => {
    pushService = await startPushService();
    const push = pushService;
    const environment = await createTestEnvironment('responses:\n  - text: "Project A is done with tok-8f3k2m9q7x."\n');
    writeFileSync(path.join(environment.paths.configDir, 'server.yaml'), SERVER_YAML);
    platform = await startPlatformServer('', { environment, platform: true });
    try {
      const users = platform.server.platform.users;
      const alice = await users.create({ email: 'alice@example.org', role: 'member' });
      const bob = await users.create({ email: 'bob@example.org', role: 'member' });
      const owner = await platform.connect();
      const aliceClient = await platform.connect(alice.id);
      const bobClient = await platform.connect(bob.id);
      const { project } = await owner.client.request('projects/create', { name: 'Project A', workspace: { executor: 'local', directory: platform.directory('a') } });
      await owner.client.request('projects/members/add', { projectId: project.id, userId: alice.id });
      await owner.client.request('projects/secrets/set', { projectId: project.id, name: 'DEPLOY_TOKEN', value: 'tok-8f3k2m9q7x' });
      await aliceClient.client.request('notifications/subscribe', { subscription: push.subscribe('alice') });
      await bobClient.client.request('notifications/subscribe', { subscription: push.subscribe('bob') });
      const { conversation } = await aliceClient.client.request('conversation/create', { projectId: project.id });
      await aliceClient.client.request('session/input', { conversationId: conversation.id, input: 'finish project A' });
      await expect.poll(() => push.received.map((message) => message.subscription), { timeout: 20_000 }).toEqual(['alice']);
      expect(payloads(push)[0]?.text).toBe('Project A is done with ***.');
      // Stopping the server waits for deliveries in progress: bob, outside the project, got nothing.
      await platform.stop();
      platform = undefined;
      expect(push.received.map((message) => message.subscription)).toEqual(['alice']);
      expect(push.rejected).toEqual([]);
    } finally {
      await environment.dispose();
    }
  });
});
