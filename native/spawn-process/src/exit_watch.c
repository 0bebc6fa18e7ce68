/*
 * Exit watches (exit_watch.h). Each watch is a uv_poll_t on the child's pidfd; it is linked into
 * its environment's list so that a worker ending while its children run can close every handle
 * before its event loop is closed (Node.js aborts on a loop closed with handles open). The
 * children themselves are left running then, as child_process leaves them.
 */
#include "exit_watch.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

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

bool exit_watch_supported(void) {
  int fd = (int)syscall(SYS_pidfd_open, getpid(), 0);
  if (fd < 0) return false;
  close(fd);
  return true;
}

/* Close callback of a watch's poll: unlinks and frees it, and ends a teardown that waited for it. */
static void release_watch(uv_handle_t* handle) {
  exit_watch* watch = (exit_watch*)handle;
  environment_state* state = watch->state;
  if (watch->previous != NULL) watch->previous->next = watch->next;
  else state->watches = watch->next;
  if (watch->next != NULL) watch->next->previous = watch->previous;
  close(watch->pidfd);
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

int exit_watch_start(napi_env env, pid_t pid, napi_value on_exit, const char** failed_call) {
  environment_state* state;
  uv_loop_t* loop;
  *failed_call = "uv_poll_start";
  if (napi_get_instance_data(env, (void**)&state) != napi_ok || state == NULL || napi_get_uv_event_loop(env, &loop) != napi_ok) return EINVAL;
  int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
  if (pidfd < 0) {
    *failed_call = "pidfd_open";
    return errno;
  }
  exit_watch* watch = calloc(1, sizeof(exit_watch));
  if (watch == NULL) {
    close(pidfd);
    return ENOMEM;
  }
  if (uv_poll_init(loop, &watch->poll, pidfd) != 0) {
    close(pidfd);
    free(watch);
    return ENOMEM;
  }
  /* A handle from here on: release_watch (its close callback) unlinks and frees it. */
  watch->state = state;
  watch->pid = pid;
  watch->pidfd = pidfd;
  watch->next = state->watches;
  if (state->watches != NULL) state->watches->previous = watch;
  state->watches = watch;
  napi_value resource_name;
  if (napi_create_reference(env, on_exit, 1, &watch->on_exit) != napi_ok ||
      napi_create_string_utf8(env, "openvaala:spawnProcess", NAPI_AUTO_LENGTH, &resource_name) != napi_ok ||
      napi_async_init(env, NULL, resource_name, &watch->async_context) != napi_ok ||
      uv_poll_start(&watch->poll, UV_READABLE, on_child_exit) != 0) {
    uv_close((uv_handle_t*)&watch->poll, release_watch);
    return ENOMEM;
  }
  return 0;
}

/* Per environment: the list of watches, and the teardown hook that closes what is left of it. */
bool exit_watch_initialise(napi_env env) {
  environment_state* state = calloc(1, sizeof(environment_state));
  if (state == NULL) return false;
  state->env = env;
  if (napi_set_instance_data(env, state, NULL, NULL) != napi_ok || napi_add_async_cleanup_hook(env, on_teardown, state, NULL) != napi_ok) {
    free(state);
    return false;
  }
  return true;
}

#endif
