/**
 * Exit codes of `openvaala exec` (and 64 for a usage mistake of any command, as in
 * sysexits.h). 130 = left with a second Ctrl-C (128 + SIGINT, as shells do).
 */
export const ExecExitCode = { completed: 0, failed: 1, interrupted: 2, usage: 64, leftAtOnce: 130 } as const;
