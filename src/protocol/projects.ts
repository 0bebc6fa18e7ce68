/**
 * Protocol methods of the platform layer (SPEC §9; docs/protocol.md, "Projects"): projects,
 * their members and secrets, per-user settings and read markers. Spread into `methods` by
 * `methods.ts`. Every method is checked against the caller's access (docs/platform.md,
 * "Members and access").
 */
import { z } from 'zod';
import { conversationIdParam, idParam, ReasoningEffortSchema } from './request-params.js';

/** A project id as a request param (`proj_…`). */
export const projectIdParam = idParam('proj', 'project');

/** A platform user id as a request param: bounded, printable, no NUL or slash. */
export const userIdParam = z.string().min(1).max(200).regex(/^[^\s/\0]+$/, { message: 'not a user id (no spaces, slashes or NUL)' });

/** Lifecycle state of a project's workspace (SPEC §9): persisted and recovered after a restart. */
export const ProjectStatusSchema = z.enum(['stopped', 'starting', 'running', 'error']);
/** Lifecycle state of a project's workspace. */
export type ProjectStatus = z.infer<typeof ProjectStatusSchema>;

/** Resource limits of a sandboxed project's commands (local executor with bubblewrap). */
export const ProjectResourcesSchema = z.object({
  /** CPU time of one command, seconds (`ulimit -t`). */
  cpuSeconds: z.number().int().min(1).max(86_400).optional(),
  /** Address space of one command, MiB (`ulimit -v`). */
  memoryMiB: z.number().int().min(16).max(1_048_576).optional(),
  /** Processes of the user at once (`ulimit -u`). */
  processes: z.number().int().min(1).max(100_000).optional(),
});
/** Resource limits of a sandboxed project's commands. */
export type ProjectResources = z.infer<typeof ProjectResourcesSchema>;

/** Where a project's files live: a directory on a configured executor. */
export const ProjectWorkspaceSchema = z.object({
  /** Executor name from `executors.yaml` (`local` is always there). */
  executor: z.string().min(1).max(200),
  /** Absolute POSIX path of the workspace directory on that executor. */
  directory: z.string().min(1).max(4096).refine((value) => value.startsWith('/') && !value.includes('\0'), { message: 'must be an absolute path (starting with /)' }),
});

/** A project (SPEC §9). */
export const ProjectSchema = z.object({
  id: z.string(),
  name: z.string(),
  /** Unique, made from the name (Unicode letters and digits kept, lowercased). */
  slug: z.string(),
  workspace: ProjectWorkspaceSchema,
  status: ProjectStatusSchema,
  /** Why the status is `error` (e.g. the SSH host is unreachable). */
  statusMessage: z.string().optional(),
  /** Position in the project list (ascending). */
  order: z.number().int(),
  resources: ProjectResourcesSchema.optional(),
  /** ms since the epoch. */
  createdAt: z.number(),
  updatedAt: z.number(),
  /** The caller's role in the project (absent for administrators who are not members). */
  role: z.enum(['manager', 'member']).optional(),
});
/** A project. */
export type Project = z.infer<typeof ProjectSchema>;

/** A project member's role: managers change the project, its members and its secrets. */
export const ProjectRoleSchema = z.enum(['manager', 'member']);
/** A project member's role. */
export type ProjectRole = z.infer<typeof ProjectRoleSchema>;

/** A secret's name: an environment variable name. */
export const SecretNameSchema = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, { message: 'must be an environment variable name (letters, digits, _; not starting with a digit)' });

/** Per-user settings (`settings/get`, `settings/update`). */
export const UserSettingsSchema = z.object({
  theme: z.enum(['system', 'light', 'dark']).optional(),
  /** Agent name from `agents.yaml`. */
  defaultAgent: z.string().min(1).max(200).optional(),
  /** `provider/model`. */
  model: z.string().min(1).max(400).optional(),
  reasoningEffort: ReasoningEffortSchema.optional(),
});
/** Per-user settings. */
export type UserSettings = z.infer<typeof UserSettingsSchema>;

const nameParam = z.string().trim().min(1, { message: 'must not be empty' }).max(200);

/** Request methods of the platform layer: name → params and result schemas. */
export const projectMethods = {
  /** The projects the caller may see, in `order`. */
  'projects/list': { params: z.object({}), result: z.object({ projects: z.array(ProjectSchema) }) },
  /** Creates a project; the caller (a user) becomes its manager. */
  'projects/create': {
    params: z.object({ name: nameParam, workspace: ProjectWorkspaceSchema, order: z.number().int().optional(), resources: ProjectResourcesSchema.optional() }),
    result: z.object({ project: ProjectSchema }),
  },
  /** Renames, reorders or changes the limits of a project (managers). The slug follows a new name. */
  'projects/update': {
    params: z.object({ projectId: projectIdParam, name: nameParam.optional(), order: z.number().int().optional(), resources: ProjectResourcesSchema.nullable().optional() }),
    result: z.object({ project: ProjectSchema }),
  },
  /** Deletes a project and everything under it: conversations, uploads, secrets, members (managers). */
  'projects/delete': {
    params: z.object({ projectId: projectIdParam }),
    result: z.object({ projectId: z.string(), deletedConversations: z.number().int().nonnegative() }),
  },
  /** Brings a project's workspace up: checks the executor reaches the directory (SSH host reachable, sandbox usable). */
  'projects/start': { params: z.object({ projectId: projectIdParam }), result: z.object({ project: ProjectSchema }) },
  /** Marks a project's workspace stopped (its conversations stay). */
  'projects/stop': { params: z.object({ projectId: projectIdParam }), result: z.object({ project: ProjectSchema }) },
  'projects/members/list': {
    params: z.object({ projectId: projectIdParam }),
    result: z.object({ members: z.array(z.object({ userId: z.string(), role: ProjectRoleSchema, addedAt: z.number() })) }),
  },
  /** Adds a member or changes a member's role (managers). */
  'projects/members/add': {
    params: z.object({ projectId: projectIdParam, userId: userIdParam, role: ProjectRoleSchema.optional() }),
    result: z.object({ userId: z.string(), role: ProjectRoleSchema }),
  },
  /** Removes a member: their subscriptions and terminals in the project end at once (managers). */
  'projects/members/remove': {
    params: z.object({ projectId: projectIdParam, userId: userIdParam }),
    result: z.object({ removed: z.boolean() }),
  },
  /** The project's secrets; values only for managers, `***` for other members. */
  'projects/secrets/list': {
    params: z.object({ projectId: projectIdParam }),
    result: z.object({ secrets: z.array(z.object({ name: z.string(), value: z.string(), updatedAt: z.number() })) }),
  },
  /** Sets a secret (managers): stored encrypted, written to the workspace `.env`, passed to commands. */
  'projects/secrets/set': {
    params: z.object({ projectId: projectIdParam, name: SecretNameSchema, value: z.string().min(6, { message: 'must be at least 6 characters (shorter values cannot be told apart from ordinary text when redacting)' }).max(65_536).refine((value) => !/[\n\r\0]/.test(value), { message: 'must not contain a line break or NUL' }) }),
    result: z.object({ name: z.string() }),
  },
  /** Removes a secret and its `.env` line (managers). */
  'projects/secrets/remove': { params: z.object({ projectId: projectIdParam, name: SecretNameSchema }), result: z.object({ removed: z.boolean() }) },
  /** The caller's settings. */
  'settings/get': { params: z.object({}), result: z.object({ settings: UserSettingsSchema }) },
  /** Changes the caller's settings; `null` clears a field. */
  'settings/update': {
    params: z.object({ changes: z.object({ theme: UserSettingsSchema.shape.theme.nullable(), defaultAgent: UserSettingsSchema.shape.defaultAgent.nullable(), model: UserSettingsSchema.shape.model.nullable(), reasoningEffort: UserSettingsSchema.shape.reasoningEffort.nullable() }).partial() }),
    result: z.object({ settings: UserSettingsSchema }),
  },
  /** Records that the caller has read a conversation up to now (its unread count in `conversation/list` drops to 0). */
  'conversations/markRead': {
    params: z.object({ conversationId: conversationIdParam }),
    result: z.object({ conversationId: z.string(), readAt: z.number() }),
  },
} as const;
