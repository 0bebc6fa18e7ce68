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
  { name: 'resume', argument: '[id|prefix|last]', description: 'open another conversation (a picker with search and running state)' },
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

/** Widest line of `/help`, in columns: a line wrapped by the terminal splits words anywhere. */
const HELP_WIDTH = 80;

/** `text` broken at spaces into lines of at most `width` characters, the later ones after `indent`. */
function wrapWords(text: string, width: number, indent: string): string {
  const leading = /^ */.exec(text)?.[0] ?? '';
  const lines: string[] = [];
  let line = '';
  for (const word of text.slice(leading.length).split(' ')) {
    if (line === '') line = `${leading}${word}`;
    else if ([...line].length + 1 + [...word].length > width) {
      lines.push(line);
      line = `${indent}${word}`;
    } else line = `${line} ${word}`;
  }
  lines.push(line);
  return lines.join('\n');
}

/** The keys `/help` lists, with what each does. */
const HELP_KEYS: readonly (readonly [string, string])[] = [
  ['Enter', 'send (queued while a turn runs)'],
  ['Ctrl+S', 'steer the running turn'],
  ['Esc', 'interrupt the running turn'],
  ['Ctrl+J, Alt+Enter', 'new line'],
  ['↑ ↓', 'history'],
  ['@', 'complete a file'],
  ['Tab', 'accept a completion'],
  ['PgUp PgDn', 'scroll'],
  ['Home End', 'top, end'],
  ['Ctrl+R', 'reasoning in full'],
  ['Ctrl+O', 'tool output in full'],
  ['Ctrl+C', 'clear, then quit'],
];

/** The text of `/help`. */
export function helpText(): string {
  const commands = SLASH_COMMANDS.map((command) => wrapWords(`  /${command.name}${command.argument ? ` ${command.argument}` : ''} — ${command.description}`, HELP_WIDTH, '      ')).join('\n');
  return [
    'Commands:',
    commands,
    // One key per line, under 80 columns: a line wrapped by the terminal split key names.
    'Keys:',
    ...HELP_KEYS.map(([keys, effect]) => `  ${keys.padEnd(18)} ${effect}`),
  ].join('\n');
}
