/**
 * The platform layer's state (SPEC §9), opened once per server on the platform database:
 * projects with their members and conversation bindings, the access rules over them, the
 * encrypted secrets with the redactor that hides their values, and per-user state.
 */
import fs from 'node:fs';
import path from 'node:path';
import { AccessControl } from './access/access-control.js';
import { openPlatformDatabase, type PlatformDatabase } from './platform-database.js';
import { ProjectStore } from './projects/project-store.js';
import { SecretCipher } from './secrets/secret-cipher.js';
import { SecretRedactor } from './secrets/secret-redactor.js';
import { SecretStore } from './secrets/secret-store.js';
import { UserStateStore } from './settings/user-state.js';

/** Folder of per-project state inside the data directory. */
export const PROJECTS_DIRECTORY = 'projects';

/** The namespaces this layer keeps in the platform database. */
export const PLATFORM_NAMESPACES = ['projects', 'project_members', 'project_conversations', 'project_secrets', 'user_settings', 'read_markers'] as const;

/** The platform's stores and rules. */
export class Platform {
  private constructor(
    readonly dataDir: string,
    /** The platform database: other platform modules (users, sessions, tokens) declare their namespaces on its `records`. */
    readonly database: PlatformDatabase,
    readonly projects: ProjectStore,
    readonly access: AccessControl,
    readonly secrets: SecretStore,
    readonly redactor: SecretRedactor,
    readonly userState: UserStateStore,
  ) {}

  /**
   * Opens `<dataDir>/platform.db` and `<dataDir>/secrets.key` (creating them when missing).
   * @throws Error naming the file when the database or the key cannot be used
   */
  static async open(dataDir: string): Promise<Platform> {
    const database = openPlatformDatabase(dataDir);
    try {
      const projects = await ProjectStore.open(database.records);
      const redactor = new SecretRedactor();
      const secrets = await SecretStore.open(database.records, SecretCipher.open(dataDir), redactor);
      return new Platform(dataDir, database, projects, new AccessControl(projects), secrets, redactor, UserStateStore.open(database.records));
    } catch (error) {
      await database.close();
      throw error;
    }
  }

  /**
   * The persistent home of external agents' state for a project (`<dataDir>/projects/<id>/agent-home`,
   * mode 0700), created on first use: e.g. `CODEX_HOME` of its Codex sessions.
   */
  agentHome(projectId: string): string {
    const home = path.join(this.dataDir, PROJECTS_DIRECTORY, projectId, 'agent-home');
    fs.mkdirSync(home, { recursive: true, mode: 0o700 });
    return home;
  }

  /**
   * What deleting a user removes here: their memberships of every project (their connections
   * lose access at once) and their settings and read markers. Sessions and tokens are the
   * sign-in layer's to remove.
   * @returns the ids of the projects they were a member of
   */
  async removeUser(userId: string): Promise<string[]> {
    const projects = await this.projects.removeMemberships(userId);
    await this.userState.forgetUser(userId);
    return projects;
  }

  /** Removes a project's folder in the data directory (its deletion). */
  removeProjectFiles(projectId: string): void {
    fs.rmSync(path.join(this.dataDir, PROJECTS_DIRECTORY, projectId), { recursive: true, force: true });
  }

  /**
   * The keys of every platform namespace (`projects`, `project_members`,
   * `project_conversations`, `project_secrets`, `user_settings`, `read_markers`), for checks
   * that a deletion left nothing behind and for diagnostics.
   */
  async inventory(): Promise<Record<string, string[]>> {
    const result: Record<string, string[]> = {};
    for (const namespace of PLATFORM_NAMESPACES) {
      const keys: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await this.database.records.list(namespace, { limit: 500, ...(cursor ? { cursor } : {}) });
        keys.push(...page.records.map((record) => record.key));
        cursor = page.nextCursor;
      } while (cursor);
      result[namespace] = keys;
    }
    return result;
  }

  /** Closes the database. */
  close(): Promise<void> {
    return this.database.close();
  }
}
