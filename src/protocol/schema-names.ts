/**
 * How protocol names become definition names in the JSON Schema document and the reference.
 */

/**
 * The PascalCase form of a method or notification name, used for its `$defs` names
 * (`conversation/create` → `ConversationCreate`, `session/setModel` → `SessionSetModel`,
 * `user_message` → `UserMessage`).
 */
export function pascalName(method: string): string {
  return method
    .split(/[/_.-]/)
    .filter((part) => part.length > 0)
    .map((part) => part[0]!.toUpperCase() + part.slice(1))
    .join('');
}
