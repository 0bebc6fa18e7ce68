/**
 * A project's resource limits as shell `ulimit` calls (POSIX `ulimit`, bash builtin: `-t`
 * CPU seconds, `-v` virtual memory in KiB, `-u` processes of the user), run before each of
 * the project's commands on a sandboxed executor. The limits hold for the command and
 * everything it starts; a command cannot raise them again (only lower them).
 */
import type { ProjectResources } from '../../protocol/projects.js';

/** The `ulimit` prefix of `resources` (empty when none is set). */
export function resourceLimitPrefix(resources: ProjectResources | undefined): string {
  if (!resources) return '';
  const calls: string[] = [];
  if (resources.cpuSeconds !== undefined) calls.push(`ulimit -t ${resources.cpuSeconds}`);
  if (resources.memoryMiB !== undefined) calls.push(`ulimit -v ${resources.memoryMiB * 1024}`);
  if (resources.processes !== undefined) calls.push(`ulimit -u ${resources.processes}`);
  return calls.length === 0 ? '' : `${calls.join(' && ')} && `;
}
