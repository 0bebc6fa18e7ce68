/**
 * Worker thread of {@link createFileConversationLoader}: loads the conversations it is asked
 * for and answers with each one (or its error) and the log damage found while loading it.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { FileLogStorage } from '../storage/file/file-log-storage.js';
import type { LogProblem } from '../storage/log-storage.js';
import { loadConversationFromFiles, type LoadRequest, type LoadResponse } from './file-conversation-loader.js';

const { root } = workerData as { root: string };
let problems: LogProblem[] = [];
const collect = (problem: LogProblem): void => {
  problems.push(problem);
};
// Only for files the fast reads decline (too large to read at once).
const logs = new FileLogStorage(root, { onProblem: collect });

function answer(response: LoadResponse): void {
  response.problems = problems;
  problems = [];
  parentPort?.postMessage(response);
}

parentPort?.on('message', (request: LoadRequest) => {
  loadConversationFromFiles(root, logs, request.conversationId, request.withMessages, collect).then(
    (loaded) => answer({ id: request.id, problems: [], loaded }),
    (error: unknown) => answer({ id: request.id, problems: [], error: (error as Error).message }),
  );
});
