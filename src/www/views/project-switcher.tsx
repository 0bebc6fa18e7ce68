/**
 * The header's project switcher: every project the caller reaches, or all conversations. The
 * pick narrows the conversation list and is where new conversations go.
 */
import { useApp } from '../state/app-state.js';
import { useStore } from '../state/use-store.js';

/** A select of the caller's projects. */
export function ProjectSwitcher() {
  const projects = useApp().projects;
  useStore(projects);
  return (
    <select class="project-switcher" aria-label="Project" value={projects.current ?? ''} onChange={(event) => projects.select(event.currentTarget.value || undefined)}>
      <option value="">All conversations</option>
      {projects.projects.map((project) => (
        <option key={project.id} value={project.id}>
          {project.name}
        </option>
      ))}
    </select>
  );
}
