/**
 * A project's members (docs/platform.md, "Members and access"): the access list with roles,
 * adding a user by id with a role, and removing one (their access ends at once).
 */
import { useEffect, useState } from 'preact/hooks';
import type { ProjectRole } from '../../protocol/projects.js';
import { useApp } from '../state/app-state.js';

type Member = { userId: string; role: ProjectRole; addedAt: number };

/** The members page of one project. */
export function ProjectMembers({ projectId }: { projectId: string }) {
  const app = useApp();
  const [members, setMembers] = useState<Member[]>([]);
  const [userId, setUserId] = useState('');
  const [role, setRole] = useState<ProjectRole>('member');
  const [error, setError] = useState<string | undefined>();
  const project = app.projects.projects.find((entry) => entry.id === projectId);

  const load = () =>
    app.client.request('projects/members/list', { projectId }).then(
      (result) => setMembers(result.members),
      (failure: unknown) => setError(failure instanceof Error ? failure.message : String(failure)),
    );
  useEffect(() => void load(), [projectId]);

  const change = async (work: () => Promise<unknown>) => {
    setError(undefined);
    try {
      await work();
      await load();
    } catch (failure) {
      setError(failure instanceof Error ? failure.message : String(failure));
    }
  };

  return (
    <main class="project-members" id="main" aria-label="Project members">
      <h2>Members of {project?.name ?? projectId}</h2>
      {error ? (
        <p role="alert" class="error-text">
          {error}
        </p>
      ) : null}
      <table>
        <thead>
          <tr>
            <th scope="col">User</th>
            <th scope="col">Role</th>
            <th scope="col">
              <span class="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {members.map((member) => (
            <tr key={member.userId} data-member={member.userId}>
              <td>{member.userId}</td>
              <td>{member.role}</td>
              <td>
                <button type="button" class="secondary small" aria-label={`Remove ${member.userId}`} onClick={() => void change(() => app.client.request('projects/members/remove', { projectId, userId: member.userId }))}>
                  Remove
                </button>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
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
