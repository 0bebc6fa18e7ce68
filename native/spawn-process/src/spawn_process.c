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
 * The exit is read with pidfd_open(2) (Linux 5.3) and waitpid(2) on that pid only, so libuv's own
 * SIGCHLD handling (which waits for its own children by pid) is not disturbed.
 */
#define _GNU_SOURCE
#include <node_api.h>
#include <uv.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#if defined(__linux__) && defined(__GLIBC__) && defined(SYS_pidfd_open) && \
    (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 29))
#define CAN_SPAWN 1
#else
#define CAN_SPAWN 0
#endif

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

struct environment_state;

/* One running child: the poll on its pidfd and the JavaScript function told of its exit. */
typedef struct exit_watch {
  uv_poll_t poll;
  struct environment_state* state;
  napi_ref on_exit;                  /* NULL until set */
  napi_async_context async_context;  /* NULL until set */
  pid_t pid;
  int pidfd;
  struct exit_watch* previous;
  struct exit_watch* next;
} exit_watch;

/*
 * What one Node.js environment (the main thread, or a worker) holds: its open watches. When the
 * environment is torn down (a worker ends) their handles must be closed before its event loop is,
 * or Node.js aborts; the children themselves are left running, as child_process leaves them.
 */
typedef struct environment_state {
  napi_env env;
  exit_watch* watches;
  bool tearing_down;
  napi_async_cleanup_hook_handle teardown;
} environment_state;

static bool pidfd_works(void) {
  int fd = (int)syscall(SYS_pidfd_open, getpid(), 0);
  if (fd < 0) return false;
  close(fd);
  return true;
}

/* A JavaScript string copied into malloc'd memory; NULL when it is not a string or on failure. */
static char* copy_string(napi_env env, napi_value value) {
  size_t length;
  if (napi_get_value_string_utf8(env, value, NULL, 0, &length) != napi_ok) return NULL;
  char* text = malloc(length + 1);
  if (text == NULL) return NULL;
  if (napi_get_value_string_utf8(env, value, text, length + 1, &length) != napi_ok) {
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

/* Close callback of a watch's poll: unlinks and frees it, and ends a teardown that waited for it. */
static void release_watch(uv_handle_t* handle) {
  exit_watch* watch = (exit_watch*)handle;
  environment_state* state = watch->state;
  if (watch->previous != NULL) watch->previous->next = watch->next;
  else state->watches = watch->next;
  if (watch->next != NULL) watch->next->previous = watch->previous;
  close_descriptor(&watch->pidfd);
  /* During teardown the environment frees its references itself; napi calls are not made then. */
  if (!state->tearing_down) {
    if (watch->on_exit != NULL) napi_delete_reference(state->env, watch->on_exit);
    if (watch->async_context != NULL) napi_async_destroy(state->env, watch->async_context);
  }
  free(watch);
  if (state->tearing_down && state->watches == NULL) {
    napi_remove_async_cleanup_hook(state->teardown);
    free(state);
  }
}

/* The environment is going away: stop watching every child still running. */
static void on_teardown(napi_async_cleanup_hook_handle handle, void* data) {
  environment_state* state = data;
  state->tearing_down = true;
  state->teardown = handle;
  if (state->watches == NULL) {
    napi_remove_async_cleanup_hook(handle);
    free(state);
    return;
  }
  for (exit_watch* watch = state->watches; watch != NULL; watch = watch->next) {
    uv_poll_stop(&watch->poll);
    uv_close((uv_handle_t*)&watch->poll, release_watch);
  }
}

/* The pidfd became readable: the child has ended. Reap it and call on_exit(code, signal). */
static void on_child_exit(uv_poll_t* poll, int status, int events) {
  (void)events;
  exit_watch* watch = (exit_watch*)poll;
  int wait_status = 0;
  pid_t reaped;
  do reaped = waitpid(watch->pid, &wait_status, WNOHANG);
  while (reaped < 0 && errno == EINTR);
  if (status == 0 && reaped == 0) return; /* Not ended after all: keep watching. */

  uv_poll_stop(poll);
  napi_env env = watch->state->env;
  napi_handle_scope scope;
  if (napi_open_handle_scope(env, &scope) == napi_ok) {
    napi_value callback, receiver, arguments[2], result;
    /* napi_make_callback needs an object as the receiver; the callback does not use it. */
    if (napi_get_reference_value(env, watch->on_exit, &callback) == napi_ok && napi_get_global(env, &receiver) == napi_ok) {
      /* Reaped by someone else (reaped < 0): the exit status is unknown, reported as code null and no signal. */
      if (reaped > 0 && WIFEXITED(wait_status)) napi_create_int32(env, WEXITSTATUS(wait_status), &arguments[0]);
      else napi_get_null(env, &arguments[0]);
      napi_create_int32(env, reaped > 0 && WIFSIGNALED(wait_status) ? WTERMSIG(wait_status) : 0, &arguments[1]);
      if (napi_make_callback(env, watch->async_context, receiver, callback, 2, arguments, &result) == napi_pending_exception) {
        napi_value exception;
        if (napi_get_and_clear_last_exception(env, &exception) == napi_ok) napi_fatal_exception(env, exception);
      }
    }
    napi_close_handle_scope(env, scope);
  }
  uv_close((uv_handle_t*)poll, release_watch);
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
  environment_state* state;
  uv_loop_t* loop;
  CHECK(napi_get_instance_data(env, (void**)&state));
  CHECK(napi_get_uv_event_loop(env, &loop));
  if (state == NULL) {
    napi_throw_error(env, NULL, "spawn: the addon was not initialised in this environment");
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
    napi_throw_type_error(env, NULL, "spawn: file and cwd must be strings, argv and envp arrays of strings");
    return NULL;
  }

  int stdin_pipe[2] = {-1, -1}, stdout_pipe[2] = {-1, -1}, stderr_pipe[2] = {-1, -1};
  int error_number = 0;
  const char* failed_call = "posix_spawn";
  pid_t pid = -1;
  int pidfd = -1;
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

  exit_watch* watch = NULL;
  bool poll_ready = false;
  napi_value result = NULL, resource_name;
  if (error_number == 0) {
    pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (pidfd < 0) {
      error_number = errno;
      failed_call = "pidfd_open";
    } else if ((watch = calloc(1, sizeof(exit_watch))) == NULL) {
      error_number = ENOMEM;
      close_descriptor(&pidfd);
    } else {
      watch->state = state;
      watch->pid = pid;
      watch->pidfd = pidfd;
      watch->next = state->watches;
      if (state->watches != NULL) state->watches->previous = watch;
      state->watches = watch;
      int values[4] = {pid, stdin_pipe[1], stdout_pipe[0], stderr_pipe[0]};
      poll_ready = uv_poll_init(loop, &watch->poll, pidfd) == 0;
      if (!poll_ready ||
          (result = result_array(env, values)) == NULL ||
          napi_create_reference(env, args[5], 1, &watch->on_exit) != napi_ok ||
          napi_create_string_utf8(env, "openvaala:spawnProcess", NAPI_AUTO_LENGTH, &resource_name) != napi_ok ||
          napi_async_init(env, NULL, resource_name, &watch->async_context) != napi_ok ||
          uv_poll_start(&watch->poll, UV_READABLE, on_child_exit) != 0) {
        error_number = ENOMEM;
        failed_call = "uv_poll_start";
      }
    }
    if (error_number != 0) {
      /* Started but not watchable: it must not run unwatched. End it and reap it now. */
      end_child(pid);
      if (poll_ready) {
        uv_close((uv_handle_t*)&watch->poll, release_watch);
      } else if (watch != NULL) {
        /* Never a handle: unlink and free it here. */
        state->watches = watch->next;
        if (watch->next != NULL) watch->next->previous = NULL;
        if (watch->on_exit != NULL) napi_delete_reference(env, watch->on_exit);
        close_descriptor(&watch->pidfd);
        free(watch);
      }
    }
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
  if (works < 0) works = pidfd_works() ? 1 : 0;
  return make_boolean(env, works == 1);
}

/* Per environment: the list of watches, and the teardown hook that closes what is left of it. */
static bool initialise_environment(napi_env env) {
  environment_state* state = calloc(1, sizeof(environment_state));
  if (state == NULL) return false;
  state->env = env;
  if (napi_set_instance_data(env, state, NULL, NULL) != napi_ok || napi_add_async_cleanup_hook(env, on_teardown, state, NULL) != napi_ok) {
    free(state);
    return false;
  }
  return true;
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

static bool initialise_environment(napi_env env) {
  (void)env;
  return true;
}

#endif

NAPI_MODULE_INIT() {
  napi_property_descriptor properties[] = {
    { "spawn", NULL, spawn, NULL, NULL, NULL, napi_enumerable, NULL },
    { "supported", NULL, supported, NULL, NULL, NULL, napi_enumerable, NULL },
  };
  if (!initialise_environment(env)) return NULL;
  if (napi_define_properties(env, exports, sizeof(properties) / sizeof(properties[0]), properties) != napi_ok) return NULL;
  return exports;
}
