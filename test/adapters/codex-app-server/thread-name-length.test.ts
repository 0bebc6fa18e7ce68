/**
 * `thread/name/set` of the Codex app-server adapter: Codex clients know no cap on a thread's
 * name, so a name over the 200 characters of a conversation title is cut to fit (with `…`)
 * rather than refused by `conversation/update`. The handler runs on a recording context.
 */
import { describe, expect, it } from 'vitest';
import type { CodexMethodContext } from '../../../src/adapters/codex-app-server/method-context.js';
import { threadMethods } from '../../../src/adapters/codex-app-server/thread-methods.js';
import { newId } from '../../../src/ids.js';
import { toCodexId } from '../../../src/protocol/codex-ids.js';

function recordingContext() {
  const requests: [string, unknown][] = [];
  const notifications: [string, unknown][] = [];
  const context = {
    runtime: {
      request: async (method: string, params: unknown) => {
        requests.push([method, params]);
        return {};
      },
    },
    followed: () => [],
    notify: (method: string, params: unknown) => notifications.push([method, params]),
  } as unknown as CodexMethodContext;
  return { context, requests, notifications };
}

describe('thread/name/set', () => {
  it('cuts a name over 200 characters to fit a conversation title, and names the thread with the cut name', async () => {
    const conversationId = newId('conv');
    const threadId = toCodexId(conversationId);
    const { context, requests, notifications } = recordingContext();
    await threadMethods['thread/name/set']!({ threadId, name: 'n'.repeat(300) }, context);
    const cut = `${'n'.repeat(199)}…`;
    expect(requests).toEqual([['conversation/update', { conversationId, title: cut }]]);
    expect(notifications).toEqual([['thread/name/updated', { threadId, threadName: cut }]]);
    await threadMethods['thread/name/set']!({ threadId, name: 'Short name' }, context);
    expect(requests[1]).toEqual(['conversation/update', { conversationId, title: 'Short name' }]);
  });
});
