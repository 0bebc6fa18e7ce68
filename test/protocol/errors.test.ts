/**
 * The protocol's helpers for the authentication and ownership errors: each gives its code
 * from `ErrorCodes` and a message that names the method, in the form docs/protocol.md shows.
 */
import { expect, it } from 'vitest';
import { ErrorCodes, forbidden, RpcError, unauthorized } from '../../src/protocol/index.js';

it('forbidden(method, what) is -32003 naming the method and the thing of another connection', () => {
  const error = forbidden('terminal/write', 'terminal term_01jd6k8g3n0a1b2c3d4e5f6g7h');
  expect(error).toBeInstanceOf(RpcError);
  expect(error.code).toBe(ErrorCodes.forbidden);
  expect(error.code).toBe(-32003);
  expect(error.message).toBe('terminal/write: forbidden: terminal term_01jd6k8g3n0a1b2c3d4e5f6g7h belongs to another connection');
});

it('unauthorized(method, why) is -32001 naming the method, or only why when there is none', () => {
  const error = unauthorized('conversation/list', 'send "initialize" with the server token first');
  expect(error.code).toBe(ErrorCodes.unauthorized);
  expect(error.code).toBe(-32001);
  expect(error.message).toBe('conversation/list: unauthorized: send "initialize" with the server token first');
  expect(unauthorized(undefined, 'x').message).toBe('unauthorized: x');
  // A hostile method name is cut, not echoed whole.
  expect(unauthorized('m'.repeat(10_000), 'x').message.length).toBeLessThan(150);
});
