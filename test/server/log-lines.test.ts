/**
 * The server log as a person reads it on a terminal, and JSON everywhere else: the line format,
 * the choice between the two, and a real `serve` writing each.
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { logsAreReadable, readableLogLine } from '../../src/log-lines.js';
import { CLI_EXECUTABLE } from '../../src/package-info.js';
import { useIsolatedHome } from '../helpers/isolated-home.js';

const isolatedEnv = useIsolatedHome('log-lines-');

describe('readable log lines', () => {
  it('show time, level and message first, then the fields as key=value, quoting only what needs it', () => {
    const time = new Date(2026, 11, 3, 12, 4, 31, 207).getTime();
    const line = JSON.stringify({ level: 40, time, pid: 4242, mcpServer: 'files', problem: 'the server stopped', attempt: 2, detail: { code: 'ENOENT' }, msg: 'MCP server stopped' });
    expect(readableLogLine(`${line}\n`)).toBe('12:04:31.207 WARN  MCP server stopped mcpServer=files problem="the server stopped" attempt=2 detail={"code":"ENOENT"}\n');
    expect(readableLogLine(JSON.stringify({ level: 30, time, msg: 'runtime server listening', url: 'http://127.0.0.1:8790' }))).toBe('12:04:31.207 INFO  runtime server listening url=http://127.0.0.1:8790\n');
  });

  it('pass a line that is not a JSON object through unchanged', () => {
    expect(readableLogLine('not json at all\n')).toBe('not json at all\n');
    expect(readableLogLine('[1,2]')).toBe('[1,2]\n');
  });

  it('are chosen by OPENVAALA_LOG_FORMAT, else only when stderr is a terminal', () => {
    expect(logsAreReadable({}, true)).toBe(true);
    expect(logsAreReadable({}, false)).toBe(false);
    expect(logsAreReadable({ OPENVAALA_LOG_FORMAT: 'json' }, true)).toBe(false);
    expect(logsAreReadable({ OPENVAALA_LOG_FORMAT: 'text' }, false)).toBe(true);
  });
});

/** Runs `openvaala serve --port 0` until its first log line about listening, then stops it; returns its stderr. */
async function serveLog(env: NodeJS.ProcessEnv): Promise<string> {
  const child = spawn(process.execPath, [CLI_EXECUTABLE, 'serve', '--port', '0'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8');
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`no log line about listening within 15 s; stderr: ${stderr}`));
    }, 15_000);
    child.stderr.on('data', (chunk: string) => {
      stderr += chunk;
      if (stderr.includes('runtime server listening')) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
  return stderr;
}

describe('openvaala serve', () => {
  it('logs JSON lines to a pipe, and readable lines with OPENVAALA_LOG_FORMAT=text', async () => {
    const json = await serveLog(isolatedEnv());
    const listening = json.split('\n').find((line) => line.includes('runtime server listening'));
    expect(JSON.parse(listening ?? '')).toMatchObject({ level: 30, msg: 'runtime server listening' });
    const text = await serveLog({ ...isolatedEnv(), OPENVAALA_LOG_FORMAT: 'text' });
    expect(text).toMatch(/^\d\d:\d\d:\d\d\.\d{3} INFO {2}runtime server listening url=http:\/\/127\.0\.0\.1:\d+ dataDir=/m);
    expect(text).not.toContain('"level"');
  }, 40_000);
});
