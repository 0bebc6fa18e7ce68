// Copies non-TypeScript files the compiled code reads at run time (tool descriptions, demo
// scripts, the web UI's sign-in page) from src/ into dist/src/, keeping their relative paths.
import { cpSync, existsSync } from 'node:fs';

const assets = [
  ['src/tools/descriptions', 'dist/src/tools/descriptions'],
  ['src/runtime/prompts', 'dist/src/runtime/prompts'],
  ['src/server/web/sign-in', 'dist/src/server/web/sign-in'],
];
for (const [from, to] of assets) {
  if (existsSync(from)) cpSync(from, to, { recursive: true });
}
