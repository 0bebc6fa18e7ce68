/**
 * Test setup (vitest `setupFiles`): every message a `RuntimeClient` sends or receives in any
 * test is checked against the committed JSON Schema (`schema/openvaala-protocol.schema.json`,
 * ajv 8, JSON Schema 2020-12), so the schema clients in other languages rely on is the one
 * the server really speaks. An invalid message makes the running test fail, naming the
 * direction, the method, the definition and each ajv error path.
 *
 * Exempt: what test files under `test/security/` send, and what a test that calls
 * `allowInvalidSentMessages()` sends (they send malformed requests on purpose); what they
 * receive is still checked.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, expect } from 'vitest';
import { observeProtocolMessages, type RuntimeClient } from '../../src/client/runtime-client.js';
import { ConnectionMessageValidator, ProtocolSchema, type MessageDirection } from '../../src/protocol/message-validator.js';

/** Test files that may send invalid messages on purpose, relative to the project root. */
const SENDS_MALFORMED = [/^test\/security\//];

const root = path.resolve(import.meta.dirname, '../..');
// test/protocol/schema.test.ts checks the document against the meta-schema; every test file
// loads this setup, so it skips that check (about 50 ms a file).
const schema = new ProtocolSchema(JSON.parse(readFileSync(path.join(root, 'schema/openvaala-protocol.schema.json'), 'utf8')) as Record<string, unknown>, { checkDocument: false });
const connections = new WeakMap<RuntimeClient, ConnectionMessageValidator>();
const violations: string[] = [];
/** The test that declared it sends malformed messages on purpose (its sent messages are not checked). */
let malformedSender: string | undefined;

function currentTest(): string {
  return `${currentTestFile()} > ${expect.getState().currentTestName ?? ''}`;
}

/**
 * Declares that the running test sends invalid messages on purpose (to check the server's
 * error answers): what its clients send is not checked until it ends; what they receive still is.
 */
export function allowInvalidSentMessages(): void {
  malformedSender = currentTest();
}

/**
 * Returns and clears the violations recorded so far (for a test that checks this hook itself).
 */
export function takeProtocolViolations(): string[] {
  return violations.splice(0);
}

function currentTestFile(): string {
  const testPath = expect.getState().testPath;
  return testPath ? path.relative(root, testPath).split(path.sep).join('/') : '';
}

/**
 * Checks one message of one connection and records a violation when it is invalid.
 * @param direction `sent` by the client or `received` from the server
 */
function checkMessage(client: RuntimeClient | object, direction: MessageDirection, message: unknown, text: string): void {
  let validator = connections.get(client as RuntimeClient);
  if (!validator) {
    validator = new ConnectionMessageValidator(schema);
    connections.set(client as RuntimeClient, validator);
  }
  const check = validator.check(direction, message);
  if (check.problems.length === 0) return;
  if (direction === 'sent' && (SENDS_MALFORMED.some((pattern) => pattern.test(currentTestFile())) || malformedSender === currentTest())) return;
  violations.push(`${direction} ${check.method ?? '(no method)'} does not match ${check.definition} in schema/openvaala-protocol.schema.json: ${check.problems.join('; ')}\n  message: ${text.slice(0, 500)}`);
}

observeProtocolMessages((event) => checkMessage(event.client, event.direction, event.message, event.text));

/**
 * Checks a message a test received outside `RuntimeClient` (a raw socket, a bare `ws`
 * client) against the schema; invalid ones fail the running test like the client's.
 * @param connection any object standing for the connection (pairs responses with requests)
 * @param text the text of one WebSocket message from the server
 */
export function checkReceivedMessage(connection: object, text: string): void {
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch {
    message = undefined;
  }
  checkMessage(connection, 'received', message, text);
}

function failOnViolations(): void {
  malformedSender = undefined;
  if (violations.length === 0) return;
  const found = violations.splice(0);
  throw new Error(`${found.length} protocol message(s) do not match the committed schema (fix the server, or the zod schema and then run \`npm run generate:schema\`):\n${found.join('\n')}`);
}

afterEach(failOnViolations);
afterAll(failOnViolations);
