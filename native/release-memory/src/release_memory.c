/*
 * One function for JavaScript: trim() asks the C allocator to hand the free memory it keeps back
 * to the operating system and says whether any was given back.
 *
 * Why: glibc's free() returns memory to the system only from the top of the main heap; free pages
 * between live allocations stay resident until malloc_trim() releases them with madvise (glibc
 * 2.8 and later, every arena; malloc_trim(3)). A server that streamed a long answer keeps those
 * pages for good otherwise. On other C libraries there is no such call and trim() returns false.
 */
#include <node_api.h>
#include <stdbool.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

static napi_value trim(napi_env env, napi_callback_info info) {
  (void)info;
  bool released = false;
#if defined(__GLIBC__)
  released = malloc_trim(0) == 1;
#endif
  napi_value result;
  if (napi_get_boolean(env, released, &result) != napi_ok) return NULL;
  return result;
}

static napi_value supported(napi_env env, napi_callback_info info) {
  (void)info;
  bool available = false;
#if defined(__GLIBC__)
  available = true;
#endif
  napi_value result;
  if (napi_get_boolean(env, available, &result) != napi_ok) return NULL;
  return result;
}

NAPI_MODULE_INIT() {
  napi_property_descriptor properties[] = {
    { "trim", NULL, trim, NULL, NULL, NULL, napi_enumerable, NULL },
    { "supported", NULL, supported, NULL, NULL, NULL, napi_enumerable, NULL },
  };
  if (napi_define_properties(env, exports, sizeof(properties) / sizeof(properties[0]), properties) != napi_ok) return NULL;
  return exports;
}
