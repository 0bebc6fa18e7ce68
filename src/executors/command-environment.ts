/**
 * Which of the server's environment variables a command on this machine receives.
 *
 * The server's environment holds provider API keys and other credentials, and commands are
 * written by a model: by default a command gets the server's environment minus every
 * variable that looks like a credential (`DEFAULT_SECRET_PATTERNS`). Each executor can widen
 * or narrow that in `executors.yaml` (`environment: { include, exclude }`).
 */
import picomatch from 'picomatch';

/**
 * Names (glob patterns, matched ignoring case) of variables never passed to a command unless
 * an `include` pattern names them: the generic credential suffixes, and the credentials of
 * well-known providers whose names do not end in one.
 */
export const DEFAULT_SECRET_PATTERNS: readonly string[] = [
  // Generic: FOO_KEY, FOO_API_KEY, FOO_TOKEN, FOO_SECRET, FOO_PASSWORD and their plurals.
  '*_KEY',
  '*_KEYS',
  '*_TOKEN',
  '*_TOKENS',
  '*_SECRET',
  '*_SECRETS',
  '*_SECRET_*',
  '*_PASSWORD',
  '*_PASSWD',
  '*_CREDENTIALS',
  '*_CREDENTIAL',
  // Personal access tokens (GH_PAT), keys spelt as one word, and key passphrases.
  '*_PAT',
  '*_APIKEY',
  '*_PASSPHRASE',
  'KEY',
  'TOKEN',
  'SECRET',
  'PASSWORD',
  'API_KEY',
  // Known providers and tools whose credentials escape the suffixes above.
  'AWS_ACCESS_KEY_ID',
  'GOOGLE_APPLICATION_CREDENTIALS',
  'PGPASSWORD',
  'MYSQL_PWD',
  'REDIS_URL',
  'DATABASE_URL',
  'DOCKER_AUTH_CONFIG',
  // Agents holding keys: ssh-agent and gpg-agent sockets sign with the user's keys.
  'SSH_AUTH_SOCK',
  'GPG_AGENT_INFO',
];

/** `environment` of an executor in `executors.yaml`. */
export interface EnvironmentPolicy {
  /**
   * Patterns of variables passed even when they match `exclude` or a default secret pattern
   * (e.g. `[GITHUB_TOKEN]` to hand one token on deliberately).
   */
  include?: readonly string[];
  /** Patterns of variables removed besides the default secret patterns (`["*"]` removes all but `include`). */
  exclude?: readonly string[];
  /**
   * Exact names of variables known to hold secrets (those the configuration reads with
   * `env:NAME`, e.g. a provider's API key), removed like the default patterns.
   */
  secretNames?: readonly string[];
}

type Matcher = (name: string) => boolean;

function matcher(patterns: readonly string[]): Matcher {
  if (patterns.length === 0) return () => false;
  // Variable names have no path separators; `dot` lets `*` match names starting with "_" or ".".
  return picomatch([...patterns], { nocase: true, dot: true });
}

/**
 * A compiled environment policy: decides, name by name, what reaches a command.
 * A variable is passed when it matches an `include` pattern, or when it matches neither an
 * `exclude` pattern nor a default secret pattern. Patterns are picomatch globs matched
 * against the whole name, ignoring case.
 */
export class CommandEnvironment {
  private readonly included: Matcher;
  private readonly excluded: Matcher;

  /**
   * @param policy include/exclude patterns (both optional)
   * @throws Error naming the pattern when one is empty
   */
  constructor(readonly policy: EnvironmentPolicy = {}) {
    for (const pattern of [...(policy.include ?? []), ...(policy.exclude ?? [])]) {
      if (pattern.trim() === '') throw new Error('environment patterns must not be empty');
    }
    this.included = matcher(policy.include ?? []);
    const excludedNames = new Set(policy.secretNames ?? []);
    const excludedPatterns = matcher([...DEFAULT_SECRET_PATTERNS, ...(policy.exclude ?? [])]);
    this.excluded = (name) => excludedNames.has(name) || excludedPatterns(name);
  }

  /** Decisions made so far, by name: a glob match per variable and per command was a visible share of a step's CPU. */
  private readonly decisions = new Map<string, boolean>();

  /** Whether a variable of the server's environment is passed to commands. */
  passes(name: string): boolean {
    let passed = this.decisions.get(name);
    if (passed === undefined) {
      passed = this.included(name) || !this.excluded(name);
      // Bounded: names come from the server's environment, but a caller may pass any source.
      if (this.decisions.size < 4096) this.decisions.set(name, passed);
    }
    return passed;
  }

  /**
   * The environment of one command: the passed variables of `source`, then the request's own
   * variables (set by the runtime, e.g. a hook's input), which are always kept.
   * @param source the server's environment (default `process.env`)
   * @param extra variables of the request; they win over `source`
   */
  build(extra: Record<string, string> | undefined, source: NodeJS.ProcessEnv = process.env): Record<string, string> {
    const environment: Record<string, string> = {};
    for (const [name, value] of Object.entries(source)) {
      if (value !== undefined && this.passes(name)) environment[name] = value;
    }
    return { ...environment, ...extra };
  }
}

let defaultEnvironment: CommandEnvironment | undefined;

/** The default policy (no include or exclude patterns), compiled once. */
export function defaultCommandEnvironment(): CommandEnvironment {
  defaultEnvironment ??= new CommandEnvironment();
  return defaultEnvironment;
}
