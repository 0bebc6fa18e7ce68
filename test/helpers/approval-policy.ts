/**
 * `agents.yaml` for tests of approvals: one default agent whose policy lets every tool call run
 * except those its rules match (docs/configuration.md, "agents.yaml"; SPEC §5–§6).
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import type { TestEnvironment } from './environment.js';

/**
 * The text of an `agents.yaml` whose `default` agent allows by default and applies `rules`.
 * @param rules YAML flow mappings, one rule each, e.g. `{ tool: apply_patch, decision: ask }`
 */
export function approvalPolicyYaml(rules: readonly string[]): string {
  return `
agents:
  default:
    default: true
    approvals:
      default: allow
      rules:
${rules.map((rule) => `        - ${rule}\n`).join('')}`;
}

/**
 * A `beforeStart` step for `startInProcessServer` that writes {@link approvalPolicyYaml} of
 * `rules` to the environment's config directory as `agents.yaml`.
 */
export function writeApprovalPolicy(rules: readonly string[]): (environment: TestEnvironment) => void {
  return (environment) => writeFileSync(path.join(environment.paths.configDir, 'agents.yaml'), approvalPolicyYaml(rules));
}
