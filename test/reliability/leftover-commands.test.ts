/**
 * Commands of a server killed with SIGKILL: a real `openvaala serve` runs a turn whose
 * commands keep writing files (one plain, one that double-forks out of its shell, one that
 * calls setsid); the server is killed; the files keep changing. A new server on the same data
 * directory stops them on start, through its records of their process groups or, for a
 * command whose record the crash prevented, through the command tag in their environment.
 * Processes whose pid is in a record but which are not the recorded process (pid reused:
 * other start time; other boot) are never signalled.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { RuntimeClient } from '../../src/client/runtime-client.js';
import { currentBootId, PROCESS_JOURNAL_FILE, processStartTime, recordedProcessGroups } from '../../src/server/process-records.js';
import { createTestEnvironment, startServe, type ServeProcess, type TestEnvironment } from '../helpers/environment.js';
import { processGone, until } from '../helpers/processes.js';
import { killQuietly, waitForFileContent } from './crash-helpers.js';

const WRITER = 'echo $$ > plain.pid; while true; do echo tick >> plain.txt; sleep 0.05; done';
// The subshell exits at once: the loop is re-parented to init but stays in the command's process group.
const DOUBLE_FORK = "( sh -c 'echo $$ > forked.pid; while true; do echo tick >> forked.txt; sleep 0.05; done' & ); while true; do sleep 1; done";
// setsid leaves the process group; it is found as a descendant of the still-running command.
const SESSION_LEADER = "setsid sh -c 'echo $$ > setsid.pid; while true; do echo tick >> setsid.txt; sleep 0.05; done' & while true; do sleep 1; done";

const SCRIPT = `
responses:
  - toolCalls:
      - { name: exec_command, arguments: { command: ${JSON.stringify(WRITER)}, yield_after_ms: 600000 } }
      - { name: exec_command, arguments: { command: ${JSON.stringify(DOUBLE_FORK)}, yield_after_ms: 600000 } }
      - { name: exec_command, arguments: { command: ${JSON.stringify(SESSION_LEADER)}, yield_after_ms: 600000 } }
  - text: "done"
`;

let environment: TestEnvironment | undefined;
let serve: ServeProcess | undefined;
let client: RuntimeClient | undefined;
const pids: number[] = [];
const bystanders: ChildProcess[] = [];

afterEach(async () => {
  await client?.close().catch(() => undefined);
  await serve?.stop();
  for (const pid of pids.splice(0)) killQuietly(pid);
  for (const child of bystanders.splice(0)) child.kill('SIGKILL');
  await environment?.dispose();
  client = undefined;
  serve = undefined;
  environment = undefined;
});

/** The process groups a data directory records as running. */
function records(dataDir: string): number[] {
  return recordedProcessGroups(dataDir).records.map((record) => record.pgid);
}

function size(file: string): number {
  return existsSync(file) ? statSync(file).size : 0;
}

/** True when every file grew within `ms`. */
async function allGrowing(files: string[], ms: number): Promise<boolean> {
  const before = files.map(size);
  await new Promise((resolve) => setTimeout(resolve, ms));
  return files.every((file, index) => size(file) > (before[index] as number));
}

/** A process of our own that is not a recorded command: its own group leader, like a command would be. */
function bystander(): ChildProcess {
  const child = spawn('sleep', ['120'], { detached: true, stdio: 'ignore' });
  bystanders.push(child);
  return child;
}

describe('commands of a server killed with SIGKILL', () => {
  it('are stopped by the next server on the same data directory; unrelated processes are not', async () => {
    environment = await createTestEnvironment(SCRIPT);
    const { workDir, paths } = environment;
    serve = await startServe(environment);
    client = await RuntimeClient.connect({ url: serve.info.url, token: serve.info.token, clientName: 'leftovers' });
    const { conversation } = await client.request('conversation/create', { cwd: workDir });
    await client.request('session/input', { conversationId: conversation.id, input: 'start the writers' });
    for (const name of ['plain', 'forked', 'setsid']) pids.push(Number(await waitForFileContent(path.join(workDir, `${name}.pid`))));
    const outputs = ['plain.txt', 'forked.txt', 'setsid.txt'].map((name) => path.join(workDir, name));
    const recordsDir = path.join(paths.dataDir, 'processes');
    // A command can write its pid file before the server has recorded it: wait for all three.
    await expect.poll(() => records(paths.dataDir).length).toBe(3);

    serve.child.kill('SIGKILL');
    await serve.stop();
    await client.close();
    client = undefined;
    // The problem being fixed: with the server dead, its commands go on changing files.
    expect(await allGrowing(outputs, 400)).toBe(true);

    // A server killed between starting a command and recording it: the plain writer has no
    // record; it is found by the command tag in its environment.
    const journal = path.join(recordsDir, PROCESS_JOURNAL_FILE);
    writeFileSync(journal, readFileSync(journal, 'utf8').split('\n').filter((line) => !line.includes(`:${pids[0]},`)).join('\n'));
    expect(records(paths.dataDir)).toHaveLength(2);

    // Records naming live processes that are not the recorded ones: a reused pid (other start
    // time) and a record from another boot, as an older server wrote them (a file per group).
    // Neither may be signalled.
    const reused = bystander();
    const otherBoot = bystander();
    await until(() => processStartTime(reused.pid as number) !== undefined && processStartTime(otherBoot.pid as number) !== undefined, 5000, 'the bystanders to start');
    writeFileSync(path.join(recordsDir, `${reused.pid}.json`), JSON.stringify({ pgid: reused.pid, startTime: String(Number(processStartTime(reused.pid as number)) - 1), bootId: currentBootId(), serverPid: 1 }));
    writeFileSync(path.join(recordsDir, `${otherBoot.pid}.json`), JSON.stringify({ pgid: otherBoot.pid, startTime: processStartTime(otherBoot.pid as number), bootId: 'another-boot', serverPid: 1 }));

    serve = await startServe(environment);
    // Stopped during start-up, before the server took clients.
    for (const pid of pids) expect(processGone(pid)).toBe(true);
    expect(await allGrowing(outputs.slice(0, 1), 300)).toBe(false);
    const sizes = outputs.map(size);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(outputs.map(size)).toEqual(sizes);
    expect(serve.output().match(/stopped a command left running by a server that stopped/g)?.length).toBe(2);
    expect(serve.output()).toContain('stopped processes of commands left running by a server that stopped');
    expect(processGone(reused.pid as number)).toBe(false);
    expect(processGone(otherBoot.pid as number)).toBe(false);
    // The records were consumed: the new server's journal is its own, and no old file is left.
    expect(records(paths.dataDir)).toEqual([]);
    expect(readdirSync(recordsDir).filter((name) => name.endsWith('.json'))).toEqual([]);
  });

  it('records nothing once commands end, and a clean stop leaves no record', async () => {
    environment = await createTestEnvironment(`
responses:
  - toolCalls: [{ name: exec_command, arguments: { command: "echo short" } }]
  - text: "done"
`);
    serve = await startServe(environment);
    client = await RuntimeClient.connect({ url: serve.info.url, token: serve.info.token, clientName: 'records' });
    const { conversation } = await client.request('conversation/create', { cwd: environment.workDir });
    const done = new Promise<void>((resolve) => client?.onNotification((event) => event.method === 'turn/completed' && resolve()));
    await client.request('conversation/subscribe', { conversationId: conversation.id });
    await client.request('session/input', { conversationId: conversation.id, input: 'go' });
    await done;
    expect(records(environment.paths.dataDir)).toEqual([]);
    await serve.stop();
    serve = undefined;
    expect(records(environment.paths.dataDir)).toEqual([]);
  });
});
