/*
 * Starts a program with posix_spawn(3) and reports its exit through a pidfd watched on the
 * Node.js event loop.
 *
 * Why: libuv (Node.js 20) starts a child process with fork(2) and then execve(2). The fork copies
 * the parent's page tables and write-protects every private page it has, so the parent then takes
 * a page fault at its next write to each of them, until the next fork does it again. A server that
 * runs one short command per agent step pays that at every step, in proportion to its resident
 * memory. glibc's posix_spawn (2.24 and later on Linux) creates the child with
 * clone(CLONE_VM | CLONE_VFORK) instead: no page table is copied and nothing is write-protected.
 *
 * The child leads a new session (setsid), has every signal set back to its default action and an
 * empty signal mask (Node.js ignores SIGPIPE, which a shell pipeline must not inherit), and gets
 * stdin from a pipe or /dev/null and stdout and stderr on pipes, and no other descriptor (glibc
 * 2.34 and later; before, only those not marked close-on-exec, as with libuv).
 *
 * Its exit is watched by exit_watch.c.
 */
#include "exit_watch.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define CHECK(call)                      \
  do {                                   \
    if ((call) != napi_ok) return NULL;  \
  } while (0)

/* The errno's symbolic name (ENOENT...): glibc knows every one; libuv's table misses some (ENOEXEC). */
static void errno_name(int error_number, char* name, size_t size) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
  const char* known = strerrorname_np(error_number);
  if (known != NULL) {
    snprintf(name, size, "%s", known);
    return;
  }
#endif
  uv_err_name_r(-error_number, name, size);
}

/* Throws an Error whose `code` is the errno's name (ENOENT...) and whose `errno` is negative, as Node.js does. */
static napi_value throw_errno(napi_env env, int error_number, const char* syscall_name) {
  char name[64];
  errno_name(error_number, name, sizeof(name));
  napi_value code, message, error, number, syscall_value;
  CHECK(napi_create_string_utf8(env, name, NAPI_AUTO_LENGTH, &code));
  CHECK(napi_create_string_utf8(env, strerror(error_number), NAPI_AUTO_LENGTH, &message));
  CHECK(napi_create_error(env, code, message, &error));
  CHECK(napi_create_int32(env, -error_number, &number));
  CHECK(napi_set_named_property(env, error, "errno", number));
  CHECK(napi_create_string_utf8(env, syscall_name, NAPI_AUTO_LENGTH, &syscall_value));
  CHECK(napi_set_named_property(env, error, "syscall", syscall_value));
  napi_throw(env, error);
  return NULL;
}

static napi_value make_boolean(napi_env env, bool value) {
  napi_value result;
  CHECK(napi_get_boolean(env, value, &result));
  return result;
}

#if CAN_SPAWN

/*
 * A JavaScript string copied into malloc'd memory; NULL when it is not a string, holds a NUL byte
 * (a C string would end there: a command cut short), or on failure.
 */
static char* copy_string(napi_env env, napi_value value) {
  size_t length;
  if (napi_get_value_string_utf8(env, value, NULL, 0, &length) != napi_ok) return NULL;
  char* text = malloc(length + 1);
  if (text == NULL) return NULL;
  if (napi_get_value_string_utf8(env, value, text, length + 1, &length) != napi_ok || memchr(text, '\0', length) != NULL) {
    free(text);
    return NULL;
  }
  return text;
}

static void free_string_array(char** strings) {
  if (strings == NULL) return;
  for (char** entry = strings; *entry != NULL; entry++) free(*entry);
  free(strings);
}

/* A JavaScript array of strings as a NULL-terminated C array; NULL when it is not one. */
static char** copy_string_array(napi_env env, napi_value array) {
  uint32_t count;
  if (napi_get_array_length(env, array, &count) != napi_ok) return NULL;
  char** strings = calloc((size_t)count + 1, sizeof(char*));
  if (strings == NULL) return NULL;
  for (uint32_t index = 0; index < count; index++) {
    napi_value element;
    if (napi_get_element(env, array, index, &element) != napi_ok || (strings[index] = copy_string(env, element)) == NULL) {
      free_string_array(strings);
      return NULL;
    }
  }
  return strings;
}

static void close_descriptor(int* fd) {
  if (*fd >= 0) close(*fd);
  *fd = -1;
}

/* Ends a child that cannot be watched (it must not run unwatched) and reaps it. */
static void end_child(pid_t pid) {
  kill(pid, SIGKILL);
  while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {}
}

/* The result [pid, stdinFd, stdoutFd, stderrFd] as a JavaScript array; NULL on failure. */
static napi_value result_array(napi_env env, const int values[4]) {
  napi_value result, element;
  CHECK(napi_create_array_with_length(env, 4, &result));
  for (uint32_t index = 0; index < 4; index++) {
    CHECK(napi_create_int32(env, values[index], &element));
    CHECK(napi_set_element(env, result, index, element));
  }
  return result;
}

/*
 * spawn(file, argv, envp, cwd, pipeStdin, onExit) -> [pid, stdinFd, stdoutFd, stderrFd]
 * file: the program's path (not looked up on PATH); argv and envp: arrays of strings ("NAME=value"
 * for envp); cwd: the working directory; pipeStdin: a pipe for stdin (else /dev/null); onExit:
 * called once as onExit(exitCode | null, signalNumber | 0) after the child has been reaped.
 * stdinFd is -1 without a pipe. Throws an Error with `code` (ENOENT...) when it cannot start; the
 * program has then not run.
 */
static napi_value spawn(napi_env env, napi_callback_info info) {
  size_t argc = 6;
  napi_value args[6];
  CHECK(napi_get_cb_info(env, info, &argc, args, NULL, NULL));
  if (argc < 6) {
    napi_throw_type_error(env, NULL, "spawn(file, argv, envp, cwd, pipeStdin, onExit) takes six arguments");
    return NULL;
  }
  bool pipe_stdin;
  napi_valuetype callback_type;
  CHECK(napi_typeof(env, args[5], &callback_type));
  if (napi_get_value_bool(env, args[4], &pipe_stdin) != napi_ok || callback_type != napi_function) {
    napi_throw_type_error(env, NULL, "spawn: pipeStdin must be a boolean and onExit a function");
    return NULL;
  }

  char* file = copy_string(env, args[0]);
  char** argv = copy_string_array(env, args[1]);
  char** envp = copy_string_array(env, args[2]);
  char* cwd = copy_string(env, args[3]);
  if (file == NULL || argv == NULL || envp == NULL || cwd == NULL) {
    free(file);
    free_string_array(argv);
    free_string_array(envp);
    free(cwd);
    napi_throw_type_error(env, NULL, "spawn: file and cwd must be strings, argv and envp arrays of strings, none holding a NUL byte");
    return NULL;
  }

  int stdin_pipe[2] = {-1, -1}, stdout_pipe[2] = {-1, -1}, stderr_pipe[2] = {-1, -1};
  int error_number = 0;
  const char* failed_call = "posix_spawn";
  pid_t pid = -1;
  /*
   * A descriptor held for the pidfd, opened before the program starts: out of descriptors
   * (EMFILE), the start fails before anything has run rather than after.
   */
  int reserved = open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (reserved < 0) {
    error_number = errno;
    failed_call = "open";
  } else if ((pipe_stdin && pipe2(stdin_pipe, O_CLOEXEC) != 0) || pipe2(stdout_pipe, O_CLOEXEC) != 0 || pipe2(stderr_pipe, O_CLOEXEC) != 0) {
    error_number = errno;
    failed_call = "pipe2";
  }

  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attributes;
  bool actions_ready = false, attributes_ready = false;
  if (error_number == 0) {
    sigset_t all_signals, no_signals;
    sigfillset(&all_signals);
    sigemptyset(&no_signals);
    actions_ready = posix_spawn_file_actions_init(&actions) == 0;
    attributes_ready = posix_spawnattr_init(&attributes) == 0;
    if (!actions_ready || !attributes_ready ||
        (error_number = posix_spawn_file_actions_addchdir_np(&actions, cwd)) != 0 ||
        (error_number = pipe_stdin ? posix_spawn_file_actions_adddup2(&actions, stdin_pipe[0], 0)
                                   : posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)) != 0 ||
        (error_number = posix_spawn_file_actions_adddup2(&actions, stdout_pipe[1], 1)) != 0 ||
        (error_number = posix_spawn_file_actions_adddup2(&actions, stderr_pipe[1], 2)) != 0 ||
#if __GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34)
        /* Descriptors the server inherited without close-on-exec (an IPC channel from its own parent) stay out. */
        (error_number = posix_spawn_file_actions_addclosefrom_np(&actions, 3)) != 0 ||
#endif
        (error_number = posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF)) != 0 ||
        (error_number = posix_spawnattr_setsigmask(&attributes, &no_signals)) != 0 ||
        (error_number = posix_spawnattr_setsigdefault(&attributes, &all_signals)) != 0) {
      if (error_number == 0) error_number = ENOMEM;
    }
  }
  if (error_number == 0) error_number = posix_spawn(&pid, file, &actions, &attributes, argv, envp);
  if (actions_ready) posix_spawn_file_actions_destroy(&actions);
  if (attributes_ready) posix_spawnattr_destroy(&attributes);
  free(file);
  free_string_array(argv);
  free_string_array(envp);
  free(cwd);

  /* The child's ends belong to the child only. */
  close_descriptor(&stdin_pipe[0]);
  close_descriptor(&stdout_pipe[1]);
  close_descriptor(&stderr_pipe[1]);
  close_descriptor(&reserved);

  napi_value result = NULL;
  if (error_number == 0) {
    int values[4] = {pid, stdin_pipe[1], stdout_pipe[0], stderr_pipe[0]};
    if ((result = result_array(env, values)) == NULL) error_number = ENOMEM;
    else error_number = exit_watch_start(env, pid, args[5], &failed_call);
    /* Started but not watchable: it must not run unwatched. End it and reap it now. */
    if (error_number != 0) end_child(pid);
  }

  if (error_number != 0) {
    close_descriptor(&stdin_pipe[1]);
    close_descriptor(&stdout_pipe[0]);
    close_descriptor(&stderr_pipe[0]);
    /* A JavaScript exception may already be pending from a failed napi call. */
    bool pending = false;
    napi_is_exception_pending(env, &pending);
    if (pending) return NULL;
    return throw_errno(env, error_number, failed_call);
  }
  return result;
}

static napi_value supported(napi_env env, napi_callback_info info) {
  (void)info;
  static int works = -1;
  if (works < 0) works = exit_watch_supported() ? 1 : 0;
  return make_boolean(env, works == 1);
}

#else

static napi_value spawn(napi_env env, napi_callback_info info) {
  (void)info;
  return throw_errno(env, ENOSYS, "posix_spawn");
}

static napi_value supported(napi_env env, napi_callback_info info) {
  (void)info;
  return make_boolean(env, false);
}

static bool exit_watch_initialise(napi_env env) {
  (void)env;
  return true;
}

#endif

NAPI_MODULE_INIT() {
  napi_property_descriptor properties[] = {
    { "spawn", NULL, spawn, NULL, NULL, NULL, napi_enumerable, NULL },
    { "supported", NULL, supported, NULL, NULL, NULL, napi_enumerable, NULL },
  };
  if (!exit_watch_initialise(env)) return NULL;
  if (napi_define_properties(env, exports, sizeof(properties) / sizeof(properties[0]), properties) != napi_ok) return NULL;
  return exports;
}
