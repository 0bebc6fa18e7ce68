/**
 * Redaction of secret values on the server's other outputs (SPEC §9): the conversation logs
 * written to disk, the conversation index and search index (`metadata.db`: titles, previews,
 * message text) and the server log. Each wraps what the server already has, so nothing that
 * writes to them needs to know about secrets.
 */
import type { Logger } from '../../logger.js';
import type { LogStorage } from '../../storage/log-storage.js';
import type { SecretRedactor } from './secret-redactor.js';

/**
 * `target` whose methods named in `writes` get their arguments redacted (every secret value
 * replaced by `***`) before they run; every other property is the target's own.
 * @param target a storage (log, record or search index)
 * @param writes the names of its methods that write
 */
export function redactingWrites<T extends object>(target: T, writes: readonly (keyof T & string)[], redactor: SecretRedactor): T {
  const names = new Set<string | symbol>(writes);
  return new Proxy(target, {
    get(object, property) {
      const value: unknown = Reflect.get(object, property, object);
      if (typeof value !== 'function') return value;
      const method = value as (...args: unknown[]) => unknown;
      if (names.has(property)) return (...args: unknown[]) => method.apply(object, redactor.active ? args.map((argument) => redactor.redact(argument)) : args);
      return method.bind(object);
    },
  });
}

/** A log storage whose appended and replaced entries have every secret value replaced by `***` before they reach the disk. */
export function redactingLogStorage(storage: LogStorage, redactor: SecretRedactor): LogStorage {
  return redactingWrites(storage, ['append', 'replaceStream'], redactor);
}

const LEVELS = new Set(['fatal', 'error', 'warn', 'info', 'debug', 'trace']);

/** A logger (and its children) whose lines have every secret value replaced by `***` in their objects and messages. */
export function redactingLogger(logger: Logger, redactor: SecretRedactor): Logger {
  return new Proxy(logger, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof property === 'string' && LEVELS.has(property) && typeof value === 'function') {
        return (...args: unknown[]) => (value as (...args: unknown[]) => void).apply(target, redactor.active ? args.map((argument) => redactor.redact(argument)) : args);
      }
      if (property === 'child' && typeof value === 'function') {
        return (...args: unknown[]) => redactingLogger((value as (...args: unknown[]) => Logger).apply(target, args.map((argument) => redactor.redact(argument))), redactor);
      }
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}
