/**
 * Exit codes of `openvaala exec` (and 64 for a usage mistake of any command, as in
 * sysexits.h). `failed` also ends a turn that completed with an answer that may be incomplete
 * (cut at the model's output limit, stopped by the content filter; see `execExitCodeOf`).
 * 130 = left with a second Ctrl-C (128 + SIGINT, as shells do).
 */
export const ExecExitCode = { completed: 0, failed: 1, interrupted: 2, usage: 64, leftAtOnce: 130 } as const;

/**
 * Exit code of `openvaala serve` when another server holds the data directory's lock (any other
 * failure to start exits 1): a client that started a server and sees this waits for that other
 * one instead of failing.
 */
export const DATA_DIR_LOCKED_EXIT_CODE = 3;
