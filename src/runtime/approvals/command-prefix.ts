/**
 * Command prefixes for "allow this command prefix for the session" approvals. A command line
 * is split into words the way a POSIX shell splits a simple command (quotes and backslashes
 * removed, POSIX.1-2017 XCU §2.2–2.3); a line that is anything more than one simple command
 * (`;`, `&&`, `|`, `&`, redirections, sub-shells, command substitution, newlines) has no words
 * here, so it never matches a prefix: `git status; rm -rf /` is not `git status …`.
 */

/** Characters that end a word and make the line more than one plain command when unquoted. */
const CONTROL_CHARACTERS = new Set([';', '&', '|', '<', '>', '(', ')', '\n', '\r', '`']);

/**
 * Splits a command line into the words of one simple command.
 * @returns the words, or undefined when the line holds shell syntax beyond one simple command
 *   (control operators, redirections, sub-shells, command or process substitution, an
 *   unterminated quote), which prefix approvals never cover
 */
export function commandWords(command: string): string[] | undefined {
  const words: string[] = [];
  let current = '';
  let inWord = false;
  for (let index = 0; index < command.length; index++) {
    const character = command[index] as string;
    if (character === '\\') {
      const next = command[index + 1];
      if (next === undefined || next === '\n') return undefined;
      current += next;
      inWord = true;
      index++;
    } else if (character === "'") {
      const end = command.indexOf("'", index + 1);
      if (end < 0) return undefined;
      current += command.slice(index + 1, end);
      inWord = true;
      index = end;
    } else if (character === '"') {
      let end = index + 1;
      let text = '';
      for (; end < command.length && command[end] !== '"'; end++) {
        const inner = command[end] as string;
        // Expansions inside double quotes still run commands.
        if (inner === '`' || (inner === '$' && command[end + 1] === '(')) return undefined;
        if (inner === '\\' && end + 1 < command.length && '"\\$`'.includes(command[end + 1] as string)) {
          text += command[end + 1];
          end++;
        } else text += inner;
      }
      if (end >= command.length) return undefined;
      current += text;
      inWord = true;
      index = end;
    } else if (character === ' ' || character === '\t') {
      if (inWord) words.push(current);
      current = '';
      inWord = false;
    } else if (CONTROL_CHARACTERS.has(character) || (character === '$' && command[index + 1] === '(')) {
      return undefined;
    } else {
      current += character;
      inWord = true;
    }
  }
  if (inWord) words.push(current);
  return words;
}

/**
 * True when `command` is one simple command whose first words are exactly `prefix`.
 * Compared on parsed words, never on raw text.
 */
export function commandMatchesPrefix(command: string, prefix: readonly string[]): boolean {
  if (prefix.length === 0) return false;
  const words = commandWords(command);
  if (!words || words.length < prefix.length) return false;
  return prefix.every((word, index) => words[index] === word);
}

/** A word that looks like a sub-command (`status`, `run`, `build`), not an option or a path. */
const SUBCOMMAND = /^[a-z][a-z0-9_-]*$/;

/**
 * The prefix the server proposes for "allow this prefix": the program and, when the next word
 * looks like a sub-command, that word too (`git status --short` → `git status`; `ls -la` →
 * `ls`). Undefined when the command is not one simple command, or starts with a variable
 * assignment (`A=b cmd`), whose meaning a prefix would not capture.
 */
export function proposeCommandPrefix(command: string): string[] | undefined {
  const words = commandWords(command);
  const program = words?.[0];
  if (!words || program === undefined || program.includes('=')) return undefined;
  const second = words[1];
  return second !== undefined && SUBCOMMAND.test(second) ? [program, second] : [program];
}

/** The shell command a tool call runs, when the tool runs one (`exec_command`'s `command`). */
export function shellCommandOf(toolName: string, args: unknown): string | undefined {
  if (toolName !== 'exec_command' || !args || typeof args !== 'object') return undefined;
  const command = (args as Record<string, unknown>).command;
  return typeof command === 'string' ? command : undefined;
}
