/**
 * The options of `openvaala serve`, declared once for two readers: commander, which builds the
 * command (its help, its usage errors), and {@link readServeArgumentsQuickly}, which reads a
 * plain `serve` command line without loading commander, so the server listens sooner (a
 * server's start is what supervisors and `exec` wait for; see docs/performance.md, start-up).
 * The quick reading accepts only what it reads exactly as commander would and leaves anything
 * else (help, a mistake, an unusual spelling) to commander.
 */
import { parseArgs } from 'node:util';
import { checkExistingConfigDirectory, checkExistingDirectory, checkInteger } from './option-checks.js';

/** The options `serve` runs with, as commander hands them to its action. */
export interface ServeOptions {
  dataDir?: string;
  configDir?: string;
  host: string;
  port: number;
  exitWhenIdle?: number;
  allowOrigin?: string[];
  allowHost?: string[];
  webRoot?: string;
  platform?: boolean;
}

/** One option of `serve`: commander's flags (`--name <value>`, `<value...>` for a list), its help line, its check and default. */
export interface ServeOptionDeclaration {
  flags: string;
  description: string;
  /** Parses and checks the value's text. @throws OptionValueError naming the option when the value is not usable */
  check?: (value: string) => unknown;
  defaultValue?: string | number;
}

/** Every option of `serve`, in the order its help lists them. */
export const SERVE_OPTIONS: readonly ServeOptionDeclaration[] = [
  { flags: '--data-dir <dir>', description: 'data directory (default $XDG_DATA_HOME/openvaala)' },
  { flags: '--config-dir <dir>', description: 'configuration directory (default $XDG_CONFIG_HOME/openvaala)', check: checkExistingConfigDirectory },
  { flags: '--host <host>', description: 'address to listen on', defaultValue: '127.0.0.1' },
  { flags: '--port <port>', description: 'port to listen on; 0 picks a free one', check: checkInteger('--port', 0, 65535), defaultValue: 8790 },
  { flags: '--exit-when-idle <ms>', description: 'exit after this many ms without clients or running work', check: checkInteger('--exit-when-idle', 1) },
  { flags: '--allow-origin <origin...>', description: 'extra browser origins allowed to use the API' },
  { flags: '--allow-host <name...>', description: 'host names clients may use to reach the server besides loopback ones and --host' },
  { flags: '--web-root <dir>', description: 'folder of the built web UI to serve at /web/v1/ (default: dist/www of the package)', check: checkExistingDirectory('--web-root') },
  { flags: '--platform', description: 'platform mode: users, sign-in and roles (docs/platform.md); default platform.enabled of server.yaml' },
];

/** What a declaration's flags say: the long name without `--`, the options key (camel case), whether it takes a value or a list. */
export function describeFlags(flags: string): { name: string; key: string; takesValue: boolean; list: boolean } {
  const [long = '', value] = flags.split(' ');
  const name = long.replace(/^--/, '');
  return { name, key: name.replace(/-([a-z])/g, (_, letter: string) => letter.toUpperCase()), takesValue: value !== undefined, list: value?.endsWith('...>') ?? false };
}

/**
 * Reads `serve`'s arguments (those after the word `serve`) without commander, when they are
 * only options of {@link SERVE_OPTIONS} spelled as `--name value`, `--name=value` or `--name`
 * (a list option once per value) and every value passes its check.
 * @returns the options with their defaults, as commander would give them; undefined for
 *   anything else (`--help`, an unknown option or argument, a value that is blank, starts
 *   with `-` or fails its check, several values after one list option), which commander then
 *   reads and, for a mistake, reports
 */
export function readServeArgumentsQuickly(args: readonly string[]): ServeOptions | undefined {
  const declarations = SERVE_OPTIONS.map((declaration) => ({ declaration, ...describeFlags(declaration.flags) }));
  let parsed: Record<string, string | boolean | (string | boolean)[] | undefined>;
  try {
    ({ values: parsed } = parseArgs({
      args: [...args],
      strict: true,
      allowPositionals: false,
      options: Object.fromEntries(declarations.map(({ name, takesValue, list }) => [name, { type: takesValue ? 'string' : 'boolean', multiple: list }] as const)),
    }));
  } catch {
    return undefined;
  }
  const options: Record<string, unknown> = {};
  for (const { declaration, name, key } of declarations) {
    const given = parsed[name];
    if (given === undefined) {
      if (declaration.defaultValue !== undefined) options[key] = declaration.defaultValue;
      continue;
    }
    // A blank value is a usage mistake commander reports (blank-values.ts), never a value to serve with.
    if ((Array.isArray(given) ? given : [given]).some((value) => typeof value === 'string' && value.trim() === '')) return undefined;
    const check = declaration.check;
    try {
      options[key] = check === undefined || typeof given === 'boolean' ? given : Array.isArray(given) ? given.map((value) => check(String(value))) : check(given);
    } catch {
      return undefined;
    }
  }
  return options as unknown as ServeOptions;
}
