/**
 * What each protocol method and each notification needs of its caller (docs/platform.md,
 * "Members and access"). One table per direction, typed over every method and notification
 * name, so a new method cannot be added without deciding who may call it and whether it
 * changes state (the one source of what a read-only API token may call).
 */
import type { MethodName, NotificationName } from '../../protocol/index.js';

/**
 * What a request needs. `write` says whether the method changes state: a read-only API token
 * may call only methods with `write: false` (docs/protocol.md, "read-only API token").
 */
export type MethodRule =
  /** Any authenticated caller; the handler narrows what it answers to the caller's projects. */
  | { kind: 'open'; write: boolean }
  /** Administrators only (the local owner, admin users, admin tokens). */
  | { kind: 'administrator'; write: boolean }
  /** Access to the conversation in `params.conversationId` (through its project). */
  | { kind: 'conversation'; write: boolean }
  /**
   * Access to the conversation of the scheduled task in `params.taskId` (through its project),
   * found by the access control's task lookup. An unknown task and a task the caller may not
   * reach get the same not-found answer (access-control.ts).
   */
  | { kind: 'task-conversation'; write: boolean }
  /** Membership of the project in `params.projectId`; `manager` asks for the manager role. */
  | { kind: 'project'; need: 'member' | 'manager'; write: boolean }
  /** `conversation/create`: writing to the project in `params.projectId`; without one, administrators only. Writes. */
  | { kind: 'create-conversation' }
  /** A terminal of the calling connection (terminals refuse other connections' ids themselves). Writes. */
  | { kind: 'own-terminal' };

type SimpleRuleKind = 'open' | 'administrator' | 'conversation' | 'task-conversation';
const read = (kind: SimpleRuleKind): MethodRule => ({ kind, write: false });
const write = (kind: SimpleRuleKind): MethodRule => ({ kind, write: true });

/** The rule of every request method a client may send. */
export const METHOD_RULES: Record<MethodName, MethodRule> = {
  initialize: read('open'),
  'agents/list': read('open'),
  'executors/list': read('open'),
  'models/list': read('open'),
  'conversation/list': read('open'),
  'conversations/subscribe': read('open'),
  'conversations/unsubscribe': read('open'),
  'projects/list': read('open'),
  'projects/create': write('open'),
  'settings/get': read('open'),
  'settings/update': write('open'),
  'config/get': read('administrator'),
  'config/update': write('administrator'),
  'config/reload': write('administrator'),
  'server/status': read('administrator'),
  'conversation/create': { kind: 'create-conversation' },
  'conversation/get': read('conversation'),
  'conversation/subscribe': read('conversation'),
  'conversation/unsubscribe': read('conversation'),
  // Any reader of the conversation may mark it read, but it records the caller's read
  // position: a change of state, refused to a read-only token.
  'conversations/markRead': write('conversation'),
  'items/list': read('conversation'),
  'session/list': read('conversation'),
  'fs/list': read('conversation'),
  'fs/read': read('conversation'),
  'fs/stat': read('conversation'),
  'workspace/gitLog': read('conversation'),
  'workspace/gitShow': read('conversation'),
  'browser/state': read('conversation'),
  // A screenshot counts as use of the browser (it keeps it from idling), but changes nothing.
  'browser/screenshot': read('conversation'),
  'browser/input': write('conversation'),
  'browser/stop': write('conversation'),
  'conversation/update': write('conversation'),
  'conversation/delete': write('conversation'),
  'conversation/archive': write('conversation'),
  'conversation/unarchive': write('conversation'),
  'conversation/fork': write('conversation'),
  'conversation/rewind': write('conversation'),
  'conversation/serveFiles': write('conversation'),
  'conversation/serveCommands': write('conversation'),
  'session/input': write('conversation'),
  'session/interrupt': write('conversation'),
  'session/setModel': write('conversation'),
  'session/setAgent': write('conversation'),
  'session/compact': write('conversation'),
  'session/dequeue': write('conversation'),
  'approval/respond': write('conversation'),
  'input/respond': write('conversation'),
  'terminal/create': write('conversation'),
  'terminal/input': { kind: 'own-terminal' },
  'terminal/resize': { kind: 'own-terminal' },
  'terminal/close': { kind: 'own-terminal' },
  'projects/members/list': { kind: 'project', need: 'member', write: false },
  'projects/secrets/list': { kind: 'project', need: 'member', write: false },
  'projects/update': { kind: 'project', need: 'manager', write: true },
  'projects/delete': { kind: 'project', need: 'manager', write: true },
  'projects/start': { kind: 'project', need: 'member', write: true },
  'projects/stop': { kind: 'project', need: 'member', write: true },
  'projects/members/add': { kind: 'project', need: 'manager', write: true },
  'projects/members/remove': { kind: 'project', need: 'manager', write: true },
  'projects/secrets/set': { kind: 'project', need: 'manager', write: true },
  'projects/secrets/remove': { kind: 'project', need: 'manager', write: true },
  'conversation/export': read('conversation'),
  // An imported conversation belongs to no project: like `conversation/create` without one.
  'conversation/import': write('administrator'),
  'plugins/list': read('administrator'),
  'plugins/add': write('administrator'),
  'plugins/remove': write('administrator'),
  'plugins/setEnabled': write('administrator'),
  'users/list': read('administrator'),
  'users/invite': write('administrator'),
  'users/setRole': write('administrator'),
  'users/remove': write('administrator'),
  // The handler admits only the local owner (the holder of the server token).
  'users/claim': write('open'),
  // A caller's own account: the handlers act on the caller's user only.
  'account/get': read('open'),
  'account/sessions/list': read('open'),
  'account/sessions/revoke': write('open'),
  'account/tokens/list': read('open'),
  'account/tokens/create': write('open'),
  'account/tokens/revoke': write('open'),
  'account/pairing/create': write('open'),
  // A conversation's git worktree belongs to the conversation.
  'worktree/diff': read('conversation'),
  'worktree/merge': write('conversation'),
  'worktree/rebase': write('conversation'),
  'worktree/discard': write('conversation'),
  // Scheduled tasks belong to their conversation: those naming only a task id follow the
  // conversation of that task.
  'schedules/list': read('conversation'),
  'schedules/create': write('conversation'),
  'schedules/update': write('task-conversation'),
  'schedules/delete': write('task-conversation'),
  'schedules/runNow': write('task-conversation'),
  'schedules/pause': write('task-conversation'),
  'schedules/resume': write('task-conversation'),
  'schedules/history': read('task-conversation'),
  // A caller's own push subscriptions: the handlers act on the caller's subscriptions only.
  'notifications/publicKey': read('open'),
  'notifications/subscribe': write('open'),
  'notifications/list': read('open'),
  'notifications/unsubscribe': write('open'),
  // Costs: a conversation's follow it; a project's need membership, its thresholds a manager;
  // `costs/user` answers the caller's own totals unless the caller is an administrator.
  'costs/conversation': read('conversation'),
  'costs/project': { kind: 'project', need: 'member', write: false },
  'costs/setThresholds': { kind: 'project', need: 'manager', write: true },
  'costs/user': read('open'),
};

/**
 * Whether `method` changes state (its rule's `write`; creating a conversation and using a
 * terminal always do), so a read-only API token may not call it.
 */
export function methodChangesState(method: MethodName): boolean {
  const rule = METHOD_RULES[method];
  return rule.kind === 'create-conversation' || rule.kind === 'own-terminal' || rule.write;
}

/** Who hears a notification. */
export type NotificationRule =
  /** Callers with access to the conversation it names (`params.conversationId` or `params.conversation.id`). */
  | 'conversation'
  /** Only the connection it was made for (terminal output). */
  | 'connection'
  /** Administrators only. */
  | 'administrator';

/** The rule of every notification. */
export const NOTIFICATION_RULES: Record<NotificationName, NotificationRule> = {
  'conversation/created': 'conversation',
  'conversation/updated': 'conversation',
  'conversation/deleted': 'conversation',
  'conversation/synced': 'conversation',
  'session/updated': 'conversation',
  'session/rewound': 'conversation',
  'session/usage': 'conversation',
  'turn/started': 'conversation',
  'turn/completed': 'conversation',
  'turn/retrying': 'conversation',
  'turn/warning': 'conversation',
  'item/started': 'conversation',
  'item/delta': 'conversation',
  'item/completed': 'conversation',
  'approval/requested': 'conversation',
  'approval/resolved': 'conversation',
  'input/requested': 'conversation',
  'input/resolved': 'conversation',
  'plan/updated': 'conversation',
  'terminal/output': 'connection',
  // Its error names configuration files and keys: the configuration is the administrators'.
  'config/updated': 'administrator',
  'costs/thresholdReached': 'conversation',
};
