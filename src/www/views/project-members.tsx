/**
 * A project's members (docs/platform.md, "Members and access"): the access list with roles,
 * adding a user by id with a role, and removing one (their access ends at once).
 */
import { useState } from 'preact/hooks';
import type { ProjectRole } from '../../protocol/projects.js';
import { ErrorText } from '../components/feedback.js';
import { ItemTable, RemoveCell } from '../components/item-table.js';
import { useReloadingList } from '../components/use-reloading-list.js';
import { useApp } from '../state/app-state.js';

type Member = { userId: string; role: ProjectRole; addedAt: number };

/** The members page of one project. */
export function ProjectMembers({ projectId }: { projectId: string }) {
  const app = useApp();
  const { entries: members, error, change } = useReloadingList<Member>(async () => (await app.client.request('projects/members/list', { projectId })).members, projectId);
  const [userId, setUserId] = useState('');
  const [role, setRole] = useState<ProjectRole>('member');
  const project = app.projects.projects.find((entry) => entry.id === projectId);

  return (
    <main class="project-members" id="main" aria-label="Project members">
      <h2>Members of {project?.name ?? projectId}</h2>
      <ErrorText error={error} />
      <ItemTable headings={['User', 'Role']}>
        {members.map((member) => (
          <tr key={member.userId} data-member={member.userId}>
            <td>{member.userId}</td>
            <td>{member.role}</td>
            <RemoveCell what={member.userId} onRemove={() => void change(() => app.client.request('projects/members/remove', { projectId, userId: member.userId }))} />
          </tr>
        ))}
      </ItemTable>
      {members.length === 0 ? <p class="muted">No members yet: administrators reach every project.</p> : null}
      <form
        onSubmit={(event) => {
          event.preventDefault();
          void change(async () => {
            await app.client.request('projects/members/add', { projectId, userId: userId.trim(), role });
            setUserId('');
          });
        }}
      >
        <label>
          User id
          <input type="text" required value={userId} onInput={(event) => setUserId(event.currentTarget.value)} />
        </label>
        <label>
          Role
          <select value={role} onChange={(event) => setRole(event.currentTarget.value as ProjectRole)}>
            <option value="member">member</option>
            <option value="manager">manager</option>
          </select>
        </label>
        <button type="submit">Add member</button>
      </form>
    </main>
  );
}
