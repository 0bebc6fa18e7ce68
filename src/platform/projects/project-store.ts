/**
 * Projects, their members and the conversations bound to them (SPEC §9), kept in the platform
 * database (`platform.db`, namespaces `projects`, `project_members`, `project_conversations`)
 * and mirrored in memory: access checks run on every request and every live notification, so
 * they must be synchronous and cheap. Every change is written to the database before the
 * memory copy changes, so a failed write leaves both as they were.
 */
import { newId } from '../../ids.js';
import type { Project, ProjectResources, ProjectRole, ProjectStatus } from '../../protocol/projects.js';
import type { RecordStorage } from '../../storage/record-storage.js';
import { uniqueSlug } from './slug.js';

/** A project as stored (without the per-caller `role`). */
export type StoredProject = Omit<Project, 'role'>;

/** A member of a project as stored. */
export interface ProjectMember {
  projectId: string;
  userId: string;
  role: ProjectRole;
  /** ms since the epoch. */
  addedAt: number;
}

/** The binding of a conversation to its project. */
interface ConversationBinding {
  conversationId: string;
  projectId: string;
}

const PROJECTS = 'projects';
const MEMBERS = 'project_members';
const CONVERSATIONS = 'project_conversations';

/** Thrown for a request naming a project that does not exist. */
export class ProjectNotFoundError extends Error {
  constructor(readonly projectId: string) {
    super(`project "${projectId}" does not exist`);
  }
}

/** Projects, members and conversation bindings, persisted and mirrored in memory. */
export class ProjectStore {
  private readonly projects = new Map<string, StoredProject>();
  /** projectId → userId → member. */
  private readonly members = new Map<string, Map<string, ProjectMember>>();
  /** conversationId → projectId. */
  private readonly bindings = new Map<string, string>();
  /** Told after a member is removed or a project deleted (connections re-check what they hold). */
  private readonly accessListeners = new Set<() => void>();

  private constructor(private readonly records: RecordStorage) {}

  /**
   * Declares the namespaces and loads every project, member and binding into memory.
   * @throws Error from the database
   */
  static async open(records: RecordStorage): Promise<ProjectStore> {
    records.defineNamespace({ name: PROJECTS });
    records.defineNamespace({ name: MEMBERS, filterFields: ['projectId', 'userId'] });
    records.defineNamespace({ name: CONVERSATIONS, filterFields: ['projectId'] });
    const store = new ProjectStore(records);
    for (const project of await listAll<StoredProject>(records, PROJECTS)) store.projects.set(project.id, project);
    for (const member of await listAll<ProjectMember>(records, MEMBERS)) store.memberMap(member.projectId).set(member.userId, member);
    for (const binding of await listAll<ConversationBinding>(records, CONVERSATIONS)) store.bindings.set(binding.conversationId, binding.projectId);
    return store;
  }

  /** Every project, by `order` then name. */
  list(): StoredProject[] {
    return [...this.projects.values()].sort((a, b) => a.order - b.order || a.name.localeCompare(b.name));
  }

  /** A project, or undefined. */
  find(projectId: string): StoredProject | undefined {
    return this.projects.get(projectId);
  }

  /** A project. @throws ProjectNotFoundError */
  get(projectId: string): StoredProject {
    const project = this.projects.get(projectId);
    if (!project) throw new ProjectNotFoundError(projectId);
    return project;
  }

  /**
   * Creates a project with a unique slug, status `stopped`, placed last unless `order` is given.
   * @returns the stored project
   */
  async create(options: { name: string; workspace: StoredProject['workspace']; order?: number; resources?: ProjectResources }): Promise<StoredProject> {
    const now = Date.now();
    const order = options.order ?? Math.max(-1, ...[...this.projects.values()].map((project) => project.order)) + 1;
    const project: StoredProject = {
      id: newId('proj'),
      name: options.name,
      slug: uniqueSlug(options.name, this.slugsExcept()),
      workspace: options.workspace,
      status: 'stopped',
      order,
      ...(options.resources ? { resources: options.resources } : {}),
      createdAt: now,
      updatedAt: now,
    };
    await this.records.set(PROJECTS, project.id, project, now);
    this.projects.set(project.id, project);
    return project;
  }

  /** Renames (new slug), reorders or changes the limits of a project; `resources: null` removes them. @throws ProjectNotFoundError */
  async update(projectId: string, changes: { name?: string; order?: number; resources?: ProjectResources | null }): Promise<StoredProject> {
    const current = this.get(projectId);
    const { resources: _resources, ...rest } = current;
    const resources = changes.resources === null ? undefined : (changes.resources ?? current.resources);
    const next: StoredProject = {
      ...rest,
      ...(changes.name !== undefined && changes.name !== current.name ? { name: changes.name, slug: uniqueSlug(changes.name, this.slugsExcept(projectId)) } : {}),
      ...(changes.order !== undefined ? { order: changes.order } : {}),
      ...(resources ? { resources } : {}),
      updatedAt: Date.now(),
    };
    return this.put(next);
  }

  /** Records a project's status (persisted, so a restart finds it). @throws ProjectNotFoundError */
  async setStatus(projectId: string, status: ProjectStatus, statusMessage?: string): Promise<StoredProject> {
    const { statusMessage: _previous, ...current } = this.get(projectId);
    return this.put({ ...current, status, ...(statusMessage !== undefined ? { statusMessage } : {}), updatedAt: Date.now() });
  }

  /** Removes a project, its members and its conversation bindings (the conversations themselves are the caller's to delete first). */
  async remove(projectId: string): Promise<void> {
    const members = [...(this.members.get(projectId)?.keys() ?? [])];
    const conversations = this.conversationsOf(projectId);
    for (const userId of members) await this.records.delete(MEMBERS, memberKey(projectId, userId));
    for (const conversationId of conversations) await this.records.delete(CONVERSATIONS, conversationId);
    await this.records.delete(PROJECTS, projectId);
    this.members.delete(projectId);
    for (const conversationId of conversations) this.bindings.delete(conversationId);
    this.projects.delete(projectId);
    this.accessChanged();
  }

  /** The members of a project, by user id. */
  membersOf(projectId: string): ProjectMember[] {
    return [...(this.members.get(projectId)?.values() ?? [])].sort((a, b) => a.userId.localeCompare(b.userId));
  }

  /** A user's role in a project, or undefined when not a member. */
  roleOf(projectId: string, userId: string): ProjectRole | undefined {
    return this.members.get(projectId)?.get(userId)?.role;
  }

  /** Adds a member or changes a member's role. @throws ProjectNotFoundError */
  async addMember(projectId: string, userId: string, role: ProjectRole): Promise<ProjectMember> {
    this.get(projectId);
    const member: ProjectMember = { projectId, userId, role, addedAt: this.members.get(projectId)?.get(userId)?.addedAt ?? Date.now() };
    await this.records.set(MEMBERS, memberKey(projectId, userId), member);
    this.memberMap(projectId).set(userId, member);
    // A demotion takes rights away too.
    this.accessChanged();
    return member;
  }

  /** Removes a member; returns whether they were one. Listeners hear of it at once. */
  async removeMember(projectId: string, userId: string): Promise<boolean> {
    if (!this.members.get(projectId)?.has(userId)) return false;
    await this.records.delete(MEMBERS, memberKey(projectId, userId));
    this.members.get(projectId)?.delete(userId);
    this.accessChanged();
    return true;
  }

  /**
   * Removes a user from every project (called when a user is deleted).
   * @returns the ids of the projects they were a member of
   */
  async removeMemberships(userId: string): Promise<string[]> {
    const projects = [...this.members.entries()].filter(([, members]) => members.has(userId)).map(([projectId]) => projectId);
    for (const projectId of projects) {
      await this.records.delete(MEMBERS, memberKey(projectId, userId));
      this.members.get(projectId)?.delete(userId);
    }
    if (projects.length > 0) this.accessChanged();
    return projects;
  }

  /** Binds a conversation to a project. @throws ProjectNotFoundError */
  async bindConversation(conversationId: string, projectId: string): Promise<void> {
    this.get(projectId);
    await this.records.set<ConversationBinding>(CONVERSATIONS, conversationId, { conversationId, projectId });
    this.bindings.set(conversationId, projectId);
  }

  /** Forgets a deleted conversation's binding. */
  async unbindConversation(conversationId: string): Promise<void> {
    if (!this.bindings.has(conversationId)) return;
    await this.records.delete(CONVERSATIONS, conversationId);
    this.bindings.delete(conversationId);
  }

  /** The project a conversation belongs to, or undefined for one outside every project. */
  projectOf(conversationId: string): string | undefined {
    return this.bindings.get(conversationId);
  }

  /** The conversations bound to a project. */
  conversationsOf(projectId: string): string[] {
    return [...this.bindings.entries()].filter(([, owner]) => owner === projectId).map(([conversationId]) => conversationId);
  }

  /** Registers a listener told after access was taken away (member removed, demoted, project deleted); returns its remover. */
  onAccessChanged(listener: () => void): () => void {
    this.accessListeners.add(listener);
    return () => this.accessListeners.delete(listener);
  }

  private accessChanged(): void {
    for (const listener of this.accessListeners) {
      try {
        listener();
      } catch {
        // One listener's failure must not keep the others from closing what they hold.
      }
    }
  }

  private async put(project: StoredProject): Promise<StoredProject> {
    await this.records.set(PROJECTS, project.id, project, project.updatedAt);
    this.projects.set(project.id, project);
    return project;
  }

  private memberMap(projectId: string): Map<string, ProjectMember> {
    let members = this.members.get(projectId);
    if (!members) this.members.set(projectId, (members = new Map()));
    return members;
  }

  private slugsExcept(projectId?: string): Set<string> {
    return new Set([...this.projects.values()].filter((project) => project.id !== projectId).map((project) => project.slug));
  }
}

function memberKey(projectId: string, userId: string): string {
  return `${projectId}/${userId}`;
}

/** Every record value of a namespace, page by page. */
export async function listAll<T>(records: RecordStorage, namespace: string, where?: Record<string, string>): Promise<T[]> {
  const values: T[] = [];
  let cursor: string | undefined;
  do {
    const page = await records.list<T>(namespace, { limit: 500, ...(cursor ? { cursor } : {}), ...(where ? { where } : {}) });
    values.push(...page.records.map((record) => record.value));
    cursor = page.nextCursor;
  } while (cursor);
  return values;
}
