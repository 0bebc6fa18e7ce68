import { expect, it } from 'vitest';
import { LatestRequest } from '../../src/www/state/latest-request.js';

/** A promise settled from outside. */
function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (reason: unknown) => void;
  const promise = new Promise<T>((yes, no) => {
    resolve = yes;
    reject = no;
  });
  return { promise, resolve, reject };
}

it('keeps the outcome of the request started last when an older one answers after it', async () => {
  const requests = new LatestRequest();
  const shown: string[] = [];
  const handlers = (name: string) => ({
    onAnswer: (value: string) => shown.push(`${name} answered ${value}`),
    onFailure: (failure: unknown) => shown.push(`${name} failed: ${(failure as Error).message}`),
    onSettled: () => shown.push(`${name} settled`),
  });
  const click = deferred<string>();
  const navigate = deferred<string>();
  const clicked = requests.run(() => click.promise, handlers('click'));
  const navigated = requests.run(() => navigate.promise, handlers('navigate'));
  navigate.reject(new Error('params.action.url: expected an http:// or https:// URL'));
  await navigated;
  click.resolve('page state');
  await clicked;
  expect(shown).toEqual(['navigate failed: params.action.url: expected an http:// or https:// URL', 'navigate settled']);
});

it('applies each outcome when the requests do not overlap, and reports a throw as a failure', async () => {
  const requests = new LatestRequest();
  const shown: string[] = [];
  await requests.run(() => Promise.resolve(1), { onAnswer: (value) => shown.push(`answer ${value}`), onFailure: () => shown.push('failure') });
  await requests.run(
    () => {
      throw new Error('refused');
    },
    { onAnswer: () => shown.push('answer'), onFailure: (failure) => shown.push(`failure ${(failure as Error).message}`) },
  );
  expect(shown).toEqual(['answer 1', 'failure refused']);
});

it('drops the outcome of a request running when dropPending is called', async () => {
  const requests = new LatestRequest();
  const shown: string[] = [];
  const listing = deferred<string>();
  const listed = requests.run(() => listing.promise, { onAnswer: (value) => shown.push(value), onFailure: () => shown.push('failure'), onSettled: () => shown.push('settled') });
  requests.dropPending();
  listing.resolve('entries of a path no longer shown');
  await listed;
  await requests.run(() => Promise.resolve('entries of the path shown now'), { onAnswer: (value) => shown.push(value), onFailure: () => shown.push('failure') });
  expect(shown).toEqual(['entries of the path shown now']);
});
