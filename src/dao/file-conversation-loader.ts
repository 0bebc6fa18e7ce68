/**
 * The reindex loader for a FileLogStorage data directory: conversations are read with the fast
 * file reads of `jsonl-file-reader.ts` (one read per file; only message lines of session logs
 * parsed) on a worker thread, so the calling thread builds the index while the next
 * conversations are read — two cores share the work.
 */
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { FileLogStorage } from '../storage/file/file-log-storage.js';
import type { LogProblem, LogProblemListener } from '../storage/log-storage.js';
import { loadConversationFromLogs, type ConversationLoader, type LoadedConversation } from './conversation-loader.js';
import { readStreamEntries, scanStreamFile } from './jsonl-file-reader.js';

/** A request to the worker thread: load one conversation. */
export interface LoadRequest {
  id: number;
  conversationId: string;
  withMessages: boolean;
}

/** The worker thread's answer to a {@link LoadRequest}, with the log damage found while loading it. */
export type LoadResponse = { id: number; problems: LogProblem[] } & ({ loaded: LoadedConversation } | { error: string });

/**
 * Loads one conversation of the data directory `root` with the fast file reads; files they
 * decline (too large) are read through `logs`, a FileLogStorage on the same root.
 */
export function loadConversationFromFiles(root: string, logs: FileLogStorage, conversationId: string, withMessages: boolean, onProblem: LogProblemListener): Promise<LoadedConversation> {
  return loadConversationFromLogs(logs, conversationId, {
    withMessages,
    fast: {
      locate: (path, stream) => logs.streamFilePath(path, stream),
      readEntries: (path, stream) => readStreamEntries(root, path, stream, onProblem),
      scanMessages: (path, stream) => scanStreamFile(root, path, stream),
    },
  });
}

/**
 * Creates a loader over the FileLogStorage data directory `root`. Only for a data directory
 * no other process writes meanwhile (reindex holds the data-dir lock). Works on a worker
 * thread when the compiled worker module is present (not when running from the TypeScript
 * sources), else on the calling thread.
 * @param options.onProblem told about damaged log lines (torn tails, corrupt lines) of metadata logs
 */
export function createFileConversationLoader(root: string, options: { onProblem?: LogProblemListener } = {}): ConversationLoader {
  const onProblem = options.onProblem ?? (() => undefined);
  const workerFile = fileURLToPath(new URL('./file-conversation-loader-worker.js', import.meta.url));
  if (!fs.existsSync(workerFile)) {
    const logs = new FileLogStorage(root, { onProblem });
    return { load: (conversationId, withMessages) => loadConversationFromFiles(root, logs, conversationId, withMessages, onProblem), close: () => logs.close() };
  }
  const worker = new Worker(workerFile, { workerData: { root } });
  const waiting = new Map<number, { resolve: (loaded: LoadedConversation) => void; reject: (error: Error) => void }>();
  let nextId = 1;
  let failure: Error | undefined;
  const failAll = (error: Error): void => {
    failure ??= error;
    for (const pending of waiting.values()) pending.reject(error);
    waiting.clear();
  };
  worker.on('message', (response: LoadResponse) => {
    for (const problem of response.problems) onProblem(problem);
    const pending = waiting.get(response.id);
    waiting.delete(response.id);
    if ('error' in response) pending?.reject(new Error(response.error));
    else pending?.resolve(response.loaded);
  });
  worker.on('error', failAll);
  worker.on('exit', (code) => failAll(new Error(`the reindex reader thread exited (code ${code})`)));
  return {
    load(conversationId, withMessages) {
      if (failure) return Promise.reject(failure);
      const id = nextId;
      nextId += 1;
      return new Promise((resolve, reject) => {
        waiting.set(id, { resolve, reject });
        worker.postMessage({ id, conversationId, withMessages } satisfies LoadRequest);
      });
    },
    async close() {
      failure ??= new Error('the reindex loader is closed');
      await worker.terminate();
    },
  };
}
