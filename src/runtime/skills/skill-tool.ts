/**
 * How the model learns about skills and loads them: the catalog (names and descriptions) in
 * the system prompt, the `load_skill` tool, and `$skill-name` mentions in the user's message.
 * A loaded skill becomes an `instruction` item (source `skill`, name = the skill's name)
 * holding its body.
 */
import { z } from 'zod';
import { defineTool, type Tool } from '../../tools/tool.js';
import type { Skill } from './skill-discovery.js';

/** Name of the tool that loads a skill. */
export const LOAD_SKILL_TOOL = 'load_skill';

/**
 * The catalog appended to the system prompt: one line per skill, `- name: description`,
 * sorted by name, with how to load one.
 */
export function skillCatalog(skills: Map<string, Skill>): string {
  const lines = [...skills.values()].sort((left, right) => left.name.localeCompare(right.name)).map((skill) => `- ${skill.name}: ${skill.description.replace(/\s+/g, ' ')}`);
  return [
    '# Skills',
    `Skills are instructions for particular kinds of task. When a task matches a skill's description, load the skill with the ${LOAD_SKILL_TOOL} tool before starting and follow it. A user may also name one as $skill-name in a message; it is then loaded for you.`,
    ...lines,
  ].join('\n');
}

/** The body of a skill's `instruction` item: its Markdown, then where its files are. */
export function skillInstructionBody(skill: Skill): string {
  const where = skill.location === 'server' ? 'on the runtime server' : `on executor "${skill.location}"`;
  return `${skill.body.trim()}\n\n(Skill folder: ${skill.directory}, ${where}.)`;
}

/**
 * The names of known skills mentioned as `$name` in a text, in order of first mention. A
 * `$` that follows a word character or another `$` (`a$b`, `$$`) is not a mention; unknown
 * names (`$HOME`) are ignored.
 */
export function findSkillMentions(text: string, known: ReadonlyMap<string, Skill>): string[] {
  const found: string[] = [];
  for (const match of text.matchAll(/(?<![\w$])\$([a-z0-9]+(?:-[a-z0-9]+)*(?::[a-z0-9]+(?:-[a-z0-9]+)*)?)(?![\w-])/g)) {
    const name = match[1] as string;
    if (known.has(name) && !found.includes(name)) found.push(name);
  }
  return found;
}

/** Arguments of `load_skill`. */
export const loadSkillParameters = z.object({
  name: z.string().min(1).describe('Name of the skill, as listed under "# Skills" in the system prompt.'),
});

/**
 * The `load_skill` tool over the skills found for this turn.
 * @param skills the valid skills, by name
 * @param load called with the skill to load; resolves to false when it is already loaded in
 *   the context (nothing new is recorded). The instruction item itself is recorded after the
 *   step's tool results, so the request keeps each tool call next to its result.
 */
export function createLoadSkillTool(skills: ReadonlyMap<string, Skill>, load: (skill: Skill) => Promise<boolean>): Tool<z.infer<typeof loadSkillParameters>> {
  return defineTool({
    name: LOAD_SKILL_TOOL,
    description: 'Loads a skill: its instructions are added to the conversation right after this call\'s result. Use it when the task matches a skill\'s description in the system prompt.',
    parameters: loadSkillParameters,
    declaredDetails: { none: 'the skill it loads is recorded as an instruction item right after the call' },
    async execute(args) {
      const skill = skills.get(args.name);
      if (!skill) {
        return { output: `no skill named "${args.name}"; available: ${[...skills.keys()].sort().join(', ') || '(none)'}`, isError: true };
      }
      const loaded = await load(skill);
      return {
        output: loaded ? `Loaded skill "${skill.name}"; its instructions follow.` : `Skill "${skill.name}" is already loaded; its instructions are above.`,
        isError: false,
        structured: { skill: skill.name, file: skill.file },
      };
    },
  });
}
