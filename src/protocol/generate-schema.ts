/**
 * Writes the protocol as JSON Schema (`npm run generate:schema`) to
 * `schema/openvaala-protocol.schema.json` (or the path given as the first argument), so
 * clients in other languages use the same definitions.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import { ItemSchema } from './items.js';
import { methods, notifications, PROTOCOL_VERSION } from './methods.js';

/**
 * Builds the JSON Schema document of the protocol: one definition per method's params and
 * result, per notification, and the item union.
 */
export function buildProtocolJsonSchema(): Record<string, unknown> {
  const definitions: Record<string, unknown> = { Item: z.toJSONSchema(ItemSchema, { unrepresentable: 'any' }) };
  for (const [name, method] of Object.entries(methods)) {
    definitions[`${name}.params`] = z.toJSONSchema(method.params, { unrepresentable: 'any' });
    definitions[`${name}.result`] = z.toJSONSchema(method.result, { unrepresentable: 'any' });
  }
  for (const [name, schema] of Object.entries(notifications)) {
    definitions[`notification:${name}`] = z.toJSONSchema(schema, { unrepresentable: 'any' });
  }
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    title: 'OpenVaala runtime protocol',
    protocolVersion: PROTOCOL_VERSION,
    definitions,
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const target = path.resolve(process.argv[2] ?? 'schema/openvaala-protocol.schema.json');
  mkdirSync(path.dirname(target), { recursive: true });
  writeFileSync(target, `${JSON.stringify(buildProtocolJsonSchema(), null, 2)}\n`);
  console.log(`wrote ${target}`);
}
