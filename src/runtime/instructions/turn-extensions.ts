/**
 * What a turn adds around the agent loop: AGENTS.md instructions and `session_start` hooks on
 * a session's first turn, `user_prompt_submit` hooks and `$skill` mentions for a user's
 * prompt, the skill catalog and `load_skill`, and the hooks the loop calls (tool calls, stop,
 * compaction). Everything it decides is recorded as items (`instruction`, `hook_run`), so the
 * model context, built from items, carries it.
 */
import path from 'node:path';
import { LocalFileSystem } from '../../executors/local/local-file-system.js';
import { newId } from '../../ids.js';
import type { ContentPart, Item } from '../../protocol/index.js';
import type { Tool } from '../../tools/tool.js';
import { itemsInContext } from '../context-builder.js';
import type { LiveConversation } from '../conversation.js';
import { createAgentHooks, type AgentHooks } from '../hooks/agent-hooks.js';
import { hookCommandName, HookRunner, type HookRunContext } from '../hooks/hook-runner.js';
import { describeSkillProblem, type SkillProblem } from '../skills/skill-file.js';
import { discoverSkills, workLocationSkillDirectories, type Skill, type SkillRoot } from '../skills/skill-discovery.js';
import { createLoadSkillTool, findSkillMentions, skillCatalog, skillInstructionBody } from '../skills/skill-tool.js';
import { collectAgentsMd, type AgentsMdFile } from './agents-md.js';
import type { LoadedPlugin } from '../../plugins/plugin-loader.js';
import { withPluginHooks } from '../../plugins/plugin-set.js';
import { commandPrompt, findPromptCommand, pluginsForTurn } from './plugin-turn.js';

/** Name of the `instruction` item that reports skipped skills. */
export const SKILL_PROBLEMS_INSTRUCTION = 'skill-problems';
const SKILL_PROBLEMS_HEADING = 'These skills were skipped because their SKILL.md is invalid (file: field: problem):';

/** What `beginTurn` needs from the session. */
export interface TurnStartOptions {
  sessionId: string;
  turnId: string;
  /** Aborted when the turn is interrupted (running hooks are killed). */
  signal: AbortSignal;
  /** The session's items so far, oldest first. */
  history(): Item[];
  /** Persists an item of the session. */
  record(item: Item): Promise<void>;
  /** False for a turn that only compacts: no first-turn instructions then. */
  carriesInput: boolean;
}

/** The turn's additions, handed to the agent loop. */
export interface TurnExtensions {
  /** The system prompt with the skill catalog appended (unchanged when there are no skills). */
  system(base: string): string;
  /** Extra tools: `load_skill` when there are skills. */
  tools: Tool[];
  /** The hooks the agent loop calls. */
  hooks: AgentHooks;
  /**
   * Runs `user_prompt_submit` hooks for a user's prompt, then has it recorded, then records
   * the hooks' context and the skills it mentions. A refused prompt is not recorded at all:
   * its text (and any attachment it names) is kept nowhere; the `hook_run` item of the hook
   * that refused it, with the hook's reason, is what stays of it.
   * @param recordMessage records the `user_message` item (only for a prompt that was not refused)
   * @returns the refusal, naming the hook and its reason, when the prompt must not reach the model
   */
  submitPrompt(content: ContentPart[], recordMessage: () => Promise<void>): Promise<string | undefined>;
}

function textOf(content: ContentPart[]): string {
  return content.map((part) => (part.type === 'text' ? part.text : `[${part.type}]`)).join('\n');
}

/**
 * True before the session's first turn with input: no input recorded and no prompt screened by
 * `user_prompt_submit` hooks (a refused prompt leaves only its `hook_run` items, and its turn
 * already recorded the first turn's instructions).
 */
function isFirstTurn(history: Item[]): boolean {
  return !history.some((item) => item.kind === 'user_message' || item.kind === 'agent_message' || (item.kind === 'hook_run' && item.event === 'user_prompt_submit'));
}

/** Problem lines already reported to this session (so each is reported once, also across restarts). */
function reportedProblemLines(history: Item[]): Set<string> {
  const lines = new Set<string>();
  for (const item of history) {
    if (item.kind === 'instruction' && item.source === 'skill' && item.name === SKILL_PROBLEMS_INSTRUCTION) {
      for (const line of item.body.split('\n')) lines.add(line);
    }
  }
  return lines;
}

/** The skills directories of a conversation, lowest precedence first (plugins' skills are named `<plugin>:<skill>`, so they never clash). */
function skillRoots(conversation: LiveConversation, plugins: readonly LoadedPlugin[]): SkillRoot[] {
  const workspace = conversation.workspace;
  const serverDirectory = conversation.runtime.skillsDirectory;
  return [
    ...plugins.flatMap((plugin) => plugin.skillDirectories.map((directory) => ({ fileSystem: new LocalFileSystem(), directory, location: 'server', namespace: plugin.name }))),
    ...(serverDirectory ? [{ fileSystem: new LocalFileSystem(), directory: path.resolve(serverDirectory), location: 'server' }] : []),
    ...workLocationSkillDirectories(workspace.root).map((directory) => ({ fileSystem: workspace.executor.fs, directory, location: workspace.executor.name })),
  ];
}

/**
 * Prepares a turn of a session: finds skills (reporting invalid ones once, as an
 * `instruction` item named `skill-problems` and in the log), and on the session's first turn
 * records its AGENTS.md files (`instruction`, source `agents_md`) and runs `session_start`
 * hooks. Rejects only when recording fails.
 */
export async function beginTurn(conversation: LiveConversation, options: TurnStartOptions): Promise<TurnExtensions> {
  const runtime = conversation.runtime;
  const workspace = conversation.workspace;
  const turnPlugins = await pluginsForTurn(runtime.plugins, workspace.executor.fs, workspace.root);
  // Said to the user at each turn, not only logged: a project's settings silently not applied look like a plugin's fault.
  const warn = (source: 'skill' | 'plugin', name: string, message: string): void =>
    conversation.publish({ method: 'turn/warning', params: { conversationId: conversation.id, sessionId: options.sessionId, turnId: options.turnId, source, name, message } });
  if (turnPlugins.problem !== undefined) {
    runtime.logger?.warn({ conversationId: conversation.id, problem: turnPlugins.problem.message }, 'project plugin settings ignored');
    warn('plugin', turnPlugins.problem.file, turnPlugins.problem.message);
  }
  const runner = new HookRunner(withPluginHooks(runtime.hooks, turnPlugins.plugins));
  const hookContext: HookRunContext = { conversationId: conversation.id, sessionId: options.sessionId, turnId: options.turnId, workspace, signal: options.signal, record: options.record };
  const recordInstruction = (source: 'agents_md' | 'skill' | 'agent' | 'client', name: string, body: string): Promise<void> => {
    const now = Date.now();
    return options.record({ id: newId('item'), sessionId: options.sessionId, turnId: options.turnId, createdAt: now, completedAt: now, status: 'completed', kind: 'instruction', source, name, body });
  };

  const { skills, problems } = await discoverSkills(skillRoots(conversation, turnPlugins.plugins));
  for (const problem of problems) warn('skill', problem.file, `skill skipped: ${describeSkillProblem(problem)}`);
  await reportSkillProblems(conversation, options, problems, (body) => recordInstruction('skill', SKILL_PROBLEMS_INSTRUCTION, body));

  if (options.carriesInput && isFirstTurn(options.history())) {
    let agentsFiles: AgentsMdFile[];
    try {
      agentsFiles = await collectAgentsMd(workspace.executor.fs, workspace.root);
    } catch (error) {
      // The executor's file system failed (a dropped connection): say so rather than fail the turn.
      agentsFiles = [{ path: workspace.root, body: `[the AGENTS.md files of this work location could not be read: ${(error as Error).message}]`, truncated: true }];
    }
    for (const file of agentsFiles) await recordInstruction('agents_md', file.path, file.body);
    // Instructions given with conversation/create are for the conversation's own agent, not its subagents.
    const given = conversation.state.instructions;
    if (given !== undefined && options.sessionId === conversation.state.rootSessionId) await recordInstruction('client', 'conversation/create', given);
    const started = await runner.run('session_start', hookContext);
    for (const text of started.additionalContext) await recordInstruction('agent', 'hook:session_start', text);
  }

  // A skill is loaded once per context: again only after compaction dropped it.
  const loadedInContext = (name: string): boolean => itemsInContext(options.history()).some((item) => item.kind === 'instruction' && item.source === 'skill' && item.name === name);
  const pendingSkills: Skill[] = [];
  const loadSkill = async (skill: Skill): Promise<boolean> => {
    if (loadedInContext(skill.name) || pendingSkills.includes(skill)) return false;
    pendingSkills.push(skill);
    return true;
  };

  return {
    system: (base) => (skills.size > 0 ? `${base}\n\n${skillCatalog(skills)}` : base),
    tools: skills.size > 0 ? [createLoadSkillTool(skills, loadSkill)] : [],
    hooks: createAgentHooks({
      runner,
      context: hookContext,
      recordInstruction: (name, body) => recordInstruction('agent', name, body),
      afterToolCalls: async () => {
        for (const skill of pendingSkills.splice(0)) await recordInstruction('skill', skill.name, skillInstructionBody(skill));
      },
    }),
    async submitPrompt(content, recordMessage) {
      const prompt = textOf(content);
      const outcome = await runner.run('user_prompt_submit', hookContext, { prompt });
      if (outcome.block !== undefined) {
        // Like Claude Code: a refused prompt is erased, not kept; the sender hears the hook and its reason.
        const hook = outcome.blockedBy !== undefined ? `the user_prompt_submit hook "${hookCommandName(outcome.blockedBy)}"` : 'a user_prompt_submit hook';
        return `the prompt was refused by ${hook}: ${outcome.block}`;
      }
      await recordMessage();
      for (const text of outcome.additionalContext) await recordInstruction('agent', 'hook:user_prompt_submit', text);
      // A prompt command's text is recorded like a loaded skill: standing instructions for this prompt.
      const invocation = findPromptCommand(prompt, turnPlugins.plugins);
      if (invocation) await recordInstruction('skill', invocation.command.name, `${commandPrompt(invocation)}\n\n(Prompt command ${invocation.command.name} from ${invocation.command.file}.)`);
      for (const name of findSkillMentions(prompt, skills)) {
        const skill = skills.get(name) as Skill;
        if (!loadedInContext(name)) await recordInstruction('skill', name, skillInstructionBody(skill));
      }
      return undefined;
    },
  };
}

async function reportSkillProblems(conversation: LiveConversation, options: TurnStartOptions, problems: SkillProblem[], record: (body: string) => Promise<void>): Promise<void> {
  if (problems.length === 0) return;
  const reported = reportedProblemLines(options.history());
  const fresh = problems.map((problem) => `- ${describeSkillProblem(problem)}`).filter((line) => !reported.has(line));
  if (fresh.length === 0) return;
  conversation.runtime.logger?.warn({ conversationId: conversation.id, problems }, 'invalid skills skipped');
  await record([SKILL_PROBLEMS_HEADING, ...fresh].join('\n'));
}
