/**
 * The projects the signed-in caller reaches (`projects/list`) and the one picked in the
 * header's switcher, kept per browser in `localStorage` so every tab opens on it. With no
 * project picked the list shows every conversation the caller reaches.
 */
import type { Project } from '../../protocol/projects.js';
import type { ProtocolClient } from '../client/protocol-client.js';

const STORAGE_KEY = 'openvaala.project';

/** Projects and the current pick. */
export class ProjectState {
  projects: Project[] = [];
  /** The picked project's id; undefined for "all conversations". */
  current: string | undefined;
  error: string | undefined;
  private readonly listeners = new Set<() => void>();

  constructor(private readonly client: ProtocolClient) {
    this.current = localStorage.getItem(STORAGE_KEY) ?? undefined;
  }

  /** Registers a change listener; returns its remover. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Reads the project list again (a picked project that is gone is unpicked). */
  async load(): Promise<void> {
    try {
      this.projects = (await this.client.request('projects/list', {})).projects;
      this.error = undefined;
      if (this.current !== undefined && !this.projects.some((project) => project.id === this.current)) this.select(undefined);
    } catch (failure) {
      this.error = failure instanceof Error ? failure.message : String(failure);
    }
    this.changed();
  }

  /** Picks a project (undefined: all conversations). */
  select(projectId: string | undefined): void {
    this.current = projectId;
    if (projectId === undefined) localStorage.removeItem(STORAGE_KEY);
    else localStorage.setItem(STORAGE_KEY, projectId);
    this.changed();
  }

  /** The picked project, when there is one. */
  get currentProject(): Project | undefined {
    return this.projects.find((project) => project.id === this.current);
  }

  private changed(): void {
    for (const listener of this.listeners) listener();
  }
}
