/**
 * The composer's `/` commands: their names and descriptions (for completion and `/help`) and
 * how a typed line is split into a command and its argument.
 */

/** One `/` command. */
export interface SlashCommand {
  name: string;
  /** What the argument is, when it takes one. */
  argument?: string;
  description: string;
}

/** Every `/` command, in the order `/help` lists them. */
export const SLASH_COMMANDS: readonly SlashCommand[] = [
  { name: 'new', description: 'start a new conversation in this directory' },
  { name: 'resume', argument: '[id]', description: 'open another conversation (a picker with search and running state)' },
  { name: 'model', argument: '[provider/model]', description: 'change the model (a picker without argument)' },
  { name: 'agent', argument: '[name]', description: 'change the agent (a picker without argument)' },
  { name: 'compact', description: 'summarise the history to free context' },
  { name: 'fork', description: 'copy this conversation into a new one and continue there' },
  { name: 'rewind', description: 'drop a message of yours and everything after it (a picker)' },
  { name: 'approvals', argument: '[ask|allow]', description: 'show the approval policy; ask or allow sets it for new conversations' },
  { name: 'status', description: 'server, conversation, model, usage' },
  { name: 'help', description: 'keys and commands' },
  { name: 'quit', description: 'leave (running turns go on on the server)' },
];

/** The commands whose name starts with what was typed. */
export function matchingCommands(typed: string): SlashCommand[] {
  return SLASH_COMMANDS.filter((command) => command.name.startsWith(typed.toLowerCase()));
}

/**
 * Splits `/name argument` into its parts.
 * @returns undefined when the text is not a command (does not start with `/`, or `//` to send a literal slash)
 */
export function parseSlashCommand(text: string): { name: string; argument: string } | undefined {
  const match = /^\/([\w-]+)(?:\s+([\s\S]*))?$/.exec(text.trim());
  if (!match) return undefined;
  return { name: (match[1] as string).toLowerCase(), argument: (match[2] ?? '').trim() };
}

/** The text of `/help`. */
export function helpText(): string {
  const commands = SLASH_COMMANDS.map((command) => `  /${command.name}${command.argument ? ` ${command.argument}` : ''} — ${command.description}`).join('\n');
  return [
    'Commands:',
    commands,
    'Keys: Enter send (queued while a turn runs) · Ctrl+S steer the running turn · Esc interrupt · Ctrl+J or Alt+Enter newline',
    '      ↑↓ history · @ complete a file · Tab accept a completion · PgUp/PgDn scroll · Home/End top/end',
    '      Ctrl+R reasoning in full · Ctrl+O tool output in full · Ctrl+C clear, then quit',
  ].join('\n');
}
