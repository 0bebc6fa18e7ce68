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

/* Throws an Error whose `code` is the errno's name (ENOENT...) and whose `errno` is negative, as Node.js does. */
static napi_value throw_errno(napi_env env, int error_number, const char* syscall_name) {
  napi_value code, message, error, number, syscall_value;
  const char* name = uv_err_name(-error_number);
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

/* One running child: the poll on its pidfd and the JavaScript function told of its exit. */
typedef struct {
  uv_poll_t poll;
  napi_env env;
  napi_ref on_exit;
  napi_async_context async_context;
  pid_t pid;
  int pidfd;
} exit_watch;

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

static void close_pair(int pair[2]) {
  if (pair[0] >= 0) close(pair[0]);
  if (pair[1] >= 0) close(pair[1]);
  pair[0] = pair[1] = -1;
}

static void free_watch(uv_handle_t* handle) {
  exit_watch* watch = (exit_watch*)handle;
  close(watch->pidfd);
  napi_delete_reference(watch->env, watch->on_exit);
  napi_async_destroy(watch->env, watch->async_context);
  free(watch);
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
  napi_env env = watch->env;
  napi_handle_scope scope;
  if (napi_open_handle_scope(env, &scope) == napi_ok) {
    napi_value callback, receiver, arguments[2], result;
    if (napi_get_reference_value(env, watch->on_exit, &callback) == napi_ok && napi_get_global(env, &receiver) == napi_ok) {
      /* napi_make_callback needs an object as the receiver; the callback does not use it. */
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
  uv_close((uv_handle_t*)poll, free_watch);
}

/*
 * spawn(file, argv, envp, cwd, pipeStdin, onExit) -> [pid, stdinFd, stdoutFd, stderrFd]
 * file: the program's path (not looked up on PATH); argv and envp: arrays of strings ("NAME=value"
 * for envp); cwd: the working directory; pipeStdin: a pipe for stdin (else /dev/null); onExit:
 * called once as onExit(exitCode | null, signalNumber | 0) after the child has been reaped.
 * stdinFd is -1 without a pipe. Throws an Error with `code` (ENOENT...) when it cannot start.
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
  uv_loop_t* loop;
  CHECK(napi_get_uv_event_loop(env, &loop));

  char* file = copy_string(env, args[0]);
  char** argv = copy_string_array(env, args[1]);
  char** envp = copy_string_array(env, args[2]);
  char* cwd = copy_string(env, args[3]);
  int stdin_pipe[2] = {-1, -1}, stdout_pipe[2] = {-1, -1}, stderr_pipe[2] = {-1, -1};
  int error_number = 0;
  const char* failed_call = "posix_spawn";
  pid_t pid = -1;
  int pidfd = -1;
  exit_watch* watch = NULL;

  if (file == NULL || argv == NULL || envp == NULL || cwd == NULL) {
    free(file);
    free_string_array(argv);
    free_string_array(envp);
    free(cwd);
    napi_throw_type_error(env, NULL, "spawn: file and cwd must be strings, argv and envp arrays of strings");
    return NULL;
  }

  if ((pipe_stdin && pipe2(stdin_pipe, O_CLOEXEC) != 0) || pipe2(stdout_pipe, O_CLOEXEC) != 0 || pipe2(stderr_pipe, O_CLOEXEC) != 0) {
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
  if (error_number == 0) {
    pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    watch = pidfd >= 0 ? calloc(1, sizeof(exit_watch)) : NULL;
    if (watch == NULL || uv_poll_init(loop, &watch->poll, pidfd) != 0) {
      error_number = pidfd < 0 ? errno : ENOMEM;
      failed_call = "pidfd_open";
      /* It cannot be watched, so it must not run unwatched: end it and reap it now. */
      kill(pid, SIGKILL);
      while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {}
      if (pidfd >= 0) close(pidfd);
      free(watch);
      watch = NULL;
    }
  }
  if (actions_ready) posix_spawn_file_actions_destroy(&actions);
  if (attributes_ready) posix_spawnattr_destroy(&attributes);
  free(file);
  free_string_array(argv);
  free_string_array(envp);
  free(cwd);

  /* The child's ends belong to the child only. */
  if (stdin_pipe[0] >= 0) close(stdin_pipe[0]);
  if (stdout_pipe[1] >= 0) close(stdout_pipe[1]);
  if (stderr_pipe[1] >= 0) close(stderr_pipe[1]);
  stdin_pipe[0] = stdout_pipe[1] = stderr_pipe[1] = -1;

  if (error_number != 0) {
    close_pair(stdin_pipe);
    close_pair(stdout_pipe);
    close_pair(stderr_pipe);
    return throw_errno(env, error_number, failed_call);
  }

  napi_value resource_name;
  watch->env = env;
  watch->pid = pid;
  watch->pidfd = pidfd;
  if (napi_create_reference(env, args[5], 1, &watch->on_exit) != napi_ok ||
      napi_create_string_utf8(env, "openvaala:spawnProcess", NAPI_AUTO_LENGTH, &resource_name) != napi_ok ||
      napi_async_init(env, NULL, resource_name, &watch->async_context) != napi_ok ||
      uv_poll_start(&watch->poll, UV_READABLE, on_child_exit) != 0) {
    /* Cannot happen short of memory exhaustion; the child would run unwatched, so end it. */
    kill(pid, SIGKILL);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR) {}
    close_pair(stdin_pipe);
    close_pair(stdout_pipe);
    close_pair(stderr_pipe);
    return throw_errno(env, ENOMEM, "uv_poll_start");
  }

  napi_value result, element;
  int values[4] = {pid, stdin_pipe[1], stdout_pipe[0], stderr_pipe[0]};
  CHECK(napi_create_array_with_length(env, 4, &result));
  for (uint32_t index = 0; index < 4; index++) {
    CHECK(napi_create_int32(env, values[index], &element));
    CHECK(napi_set_element(env, result, index, element));
  }
  return result;
}

static napi_value supported(napi_env env, napi_callback_info info) {
  (void)info;
  static int works = -1;
  if (works < 0) works = pidfd_works() ? 1 : 0;
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

#endif

NAPI_MODULE_INIT() {
  napi_property_descriptor properties[] = {
    { "spawn", NULL, spawn, NULL, NULL, NULL, napi_enumerable, NULL },
    { "supported", NULL, supported, NULL, NULL, NULL, napi_enumerable, NULL },
  };
  if (napi_define_properties(env, exports, sizeof(properties) / sizeof(properties[0]), properties) != napi_ok) return NULL;
  return exports;
}
