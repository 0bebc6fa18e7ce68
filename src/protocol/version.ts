/** Version of the runtime protocol's message shapes (SPEC §5); bumped on any incompatible change. */
export const PROTOCOL_VERSION = 2;
