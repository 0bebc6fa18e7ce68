/*
 * Watching a child's exit on the Node.js event loop, per Node.js environment (the main thread or
 * a worker): a pidfd (pidfd_open(2), Linux 5.3) polled by libuv, and waitpid(2) on that pid only,
 * so libuv's own SIGCHLD handling (which waits for its own children by pid) is not disturbed.
 */
#ifndef OPENVAALA_EXIT_WATCH_H
#define OPENVAALA_EXIT_WATCH_H

#define _GNU_SOURCE
#include <node_api.h>
#include <uv.h>
#include <stdbool.h>
#include <sys/syscall.h>
#include <sys/types.h>

#if defined(__linux__) && defined(__GLIBC__) && defined(SYS_pidfd_open) && \
    (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 29))
#define CAN_SPAWN 1
#else
#define CAN_SPAWN 0
#endif

#if CAN_SPAWN

/* Whether pidfd_open works here (the kernel is Linux 5.3 or later). */
bool exit_watch_supported(void);

/* Sets up the watches of one environment; call once from the module's initialisation. */
bool exit_watch_initialise(napi_env env);

/*
 * Watches `pid` (a child of this process, already started) and calls on_exit(exitCode | null,
 * signalNumber | 0) once it has been reaped. Returns 0, or an errno value with *failed_call set
 * when it cannot be watched; the caller must then end the child.
 */
int exit_watch_start(napi_env env, pid_t pid, napi_value on_exit, const char** failed_call);

#endif

#endif
