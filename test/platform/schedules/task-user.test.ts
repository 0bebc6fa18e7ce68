/**
 * The user a new scheduled task acts for (docs/platform.md, "Scheduled tasks", "Who may"):
 * members act for themselves whatever the params say; administrators may name another user.
 */
import { describe, expect, it } from 'vitest';
import { LOCAL_OWNER, type Caller } from '../../../src/platform/caller.js';
import { taskUserId } from '../../../src/server/handlers/schedules.js';

const member: Caller = { kind: 'user', userId: 'alice', role: 'member', webSessionId: 'web_1' };
const memberToken: Caller = { kind: 'api-token', userId: 'alice', role: 'member', tokenId: 'tok_1', scope: { kind: 'project', projectId: 'proj_1' } };
const admin: Caller = { kind: 'user', userId: 'root', role: 'admin', webSessionId: 'web_2' };

describe('taskUserId', () => {
  it('gives a member their own id, ignoring params.userId', () => {
    expect(taskUserId(member, 'bob')).toBe('alice');
    expect(taskUserId(member, undefined)).toBe('alice');
    expect(taskUserId(memberToken, 'bob')).toBe('alice');
  });

  it('lets an administrator name another user, defaulting to themselves', () => {
    expect(taskUserId(admin, 'bob')).toBe('bob');
    expect(taskUserId(admin, undefined)).toBe('root');
  });

  it('gives the local owner, who has no account, params.userId as is', () => {
    expect(taskUserId(LOCAL_OWNER, 'bob')).toBe('bob');
    expect(taskUserId(LOCAL_OWNER, undefined)).toBeUndefined();
  });
});
