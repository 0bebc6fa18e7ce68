/**
 * Redaction of secret values on the server's two other outputs (SPEC §9): the conversation
 * logs written to disk and the server log. Both wrap what the server already has, so nothing
 * that writes to them needs to know about secrets.
 */
import type { Logger } from '../../logger.js';
import type { LogStorage } from '../../storage/log-storage.js';
import type { SecretRedactor } from './secret-redactor.js';

/** A log storage whose appended and replaced entries have every secret value replaced by `***` before they reach the disk. */
export function redactingLogStorage(storage: LogStorage, redactor: SecretRedactor): LogStorage {
  return new Proxy(storage, {
    get(target, property) {
      if (property === 'append') return <T>(path: string, stream: string, values: T[]) => target.append(path, stream, redactor.redact(values));
      if (property === 'replaceStream') return <T>(path: string, stream: string, values: T[]) => target.replaceStream(path, stream, redactor.redact(values));
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
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
