/** A logger for tests that keeps what it is told to warn about and drops the rest. */
import type { Logger } from '../../src/logger.js';

/** One warning: the structured fields and the message, as given to `logger.warn`. */
export interface RecordedWarning {
  fields: Record<string, unknown>;
  message: string;
}

/** A logger that keeps its warnings in `warnings`, in order. */
export function recordingLogger(): { logger: Logger; warnings: RecordedWarning[] } {
  const warnings: RecordedWarning[] = [];
  const ignore = () => undefined;
  const logger = {
    fatal: ignore,
    error: ignore,
    info: ignore,
    debug: ignore,
    trace: ignore,
    warn: (fields: Record<string, unknown>, message: string) => void warnings.push({ fields, message }),
    flush: (callback?: () => void) => callback?.(),
  } as unknown as Logger;
  return { logger, warnings };
}
