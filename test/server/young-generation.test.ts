import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * Runs in a fresh Node.js process: the flag changes V8 for the whole process, and the young
 * generation's size before the test must not depend on what other tests allocated. The child
 * loads the built module (`npm run build`), as the tests that run the CLI do.
 */
function youngGenerationAfterAllocating(stopGrowth: boolean): { first: number; second: number } {
  const module = pathToFileURL(path.resolve('dist/src/server/idle-memory.js')).href;
  const script = `
    import { getHeapSpaceStatistics } from 'node:v8';
    import { stopYoungGenerationGrowth } from ${JSON.stringify(module)};
    const size = () => getHeapSpaceStatistics().find((space) => space.space_name === 'new_space').space_size;
    ${stopGrowth ? 'stopYoungGenerationGrowth();' : ''}
    const churn = () => { let kept = []; for (let index = 0; index < 3_000_000; index++) { kept.push({ index }); if (kept.length > 200_000) kept = []; } };
    churn();
    const first = size();
    churn();
    console.log(JSON.stringify({ first, second: size() }));
  `;
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
  expect(result.stderr).toBe('');
  return JSON.parse(result.stdout) as { first: number; second: number };
}

describe('the young generation of the server process', () => {
  it('grows under allocation by default, and keeps its size once its growth is stopped', () => {
    const free = youngGenerationAfterAllocating(false);
    const stopped = youngGenerationAfterAllocating(true);
    // The same allocations: the default grows to its maximum, the stopped one stays where it was.
    expect(free.second).toBeGreaterThan(stopped.second);
    expect(stopped.second).toBe(stopped.first);
  });
});
