/**
 * A turn whose answer the provider cut (its output limit, `max_tokens`) or stopped (its content
 * filter, `refusal`) completes, but its answer may be incomplete: `openvaala exec` says so
 * after the turn's end line and exits 1, `--json` carries the stop reason in `turn/completed`,
 * `conversations show` says it after the cut answer, and `conversations list` (and the summary it
 * is made from) says it of the last turn. Real processes (`openvaala serve`,
 * `exec`, `conversations show`) against the mock provider over HTTP.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { AnyNotification } from '../../src/protocol/index.js';
import { createTestEnvironment, runCli, startServe, type ServeProcess, type TestEnvironment } from '../helpers/environment.js';

let environment: TestEnvironment | undefined;
let serve: ServeProcess | undefined;

afterEach(async () => {
  await serve?.stop();
  serve = undefined;
  await environment?.dispose();
  environment = undefined;
});

const SCRIPT = `
responses:
  - text: "A whole answer."
  - text: "The report starts here and"
    incompleteReason: max_output_tokens
  - text: "I cannot"
    incompleteReason: content_filter
`;

const CUT = "warning: the answer was cut at the model's output limit (max_tokens) and may be incomplete";
const FILTERED = "warning: the provider's content filter stopped the answer (refusal); it may be incomplete";

describe('a turn that ended other than by a normal finish', { timeout: 60_000 }, () => {
  it('is told by exec (plain and --json) and by conversations show, and exec exits 1', async () => {
    environment = await createTestEnvironment(SCRIPT);
    serve = await startServe(environment);
    const options = { env: environment.env, cwd: environment.workDir };

    // A normal finish: nothing more than the end line.
    const whole = await runCli(['exec', 'answer in full'], options);
    expect(whole.code, whole.stderr).toBe(0);
    expect(whole.stderr).toMatch(/^turn completed · /m);
    expect(whole.stderr).not.toContain('warning:');
    expect(whole.stderr).not.toContain('continue it with');

    // Cut at the output limit: the end line, then why the answer may be incomplete, then how to go on.
    const cut = await runCli(['exec', '--resume', 'last', 'write the long report'], options);
    expect(cut.stdout).toContain('The report starts here and');
    const lines = cut.stderr.trimEnd().split('\n');
    const end = lines.findIndex((line) => line.startsWith('turn completed · '));
    expect(end, cut.stderr).toBeGreaterThanOrEqual(0);
    expect(lines.slice(end + 1)).toEqual([CUT, expect.stringMatching(/^continue it with: openvaala exec --resume conv_\w+ "…"$/)]);
    expect(cut.code).toBe(1);

    // Stopped by the content filter, with --json: the turn's end event carries the reason.
    const filtered = await runCli(['exec', '--json', '--resume', 'last', 'tell me'], options);
    const events = filtered.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as AnyNotification);
    const ended = events.at(-1);
    expect(ended?.method).toBe('turn/completed');
    expect(ended?.method === 'turn/completed' ? ended.params.turn : undefined).toMatchObject({ status: 'completed', stopReason: 'refusal' });
    expect(filtered.code).toBe(1);

    // The transcript says it after each cut answer, and the last turn's line names the reason.
    const shown = await runCli(['conversations', 'show', 'last'], options);
    expect(shown.code, shown.stderr).toBe(0);
    const transcript = shown.stdout.split('\n');
    expect(transcript[transcript.indexOf('The report starts here and') + 1]).toBe(CUT);
    expect(transcript[transcript.indexOf('I cannot') + 1]).toBe(FILTERED);
    expect(transcript[transcript.indexOf('A whole answer.') + 1]).not.toMatch(/^warning:/);
    expect(shown.stdout.trimEnd().split('\n').at(-1)).toBe('last turn completed (refused by the provider)');

    // The list says it of the last turn too, as does the summary it is made from.
    const listed = await runCli(['conversations', 'list'], options);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout.split('\n')[1]).toContain('  completed (refused by the provider)  ');
    const listedJson = await runCli(['conversations', 'list', '--json'], options);
    expect(JSON.parse(listedJson.stdout)).toMatchObject([{ lastTurnStatus: 'completed', lastTurnStopReason: 'refusal' }]);
  });
});
