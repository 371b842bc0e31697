/*
 * oneccl_itt_null.c — the Intel ITT (instrumentation) entry points that the wheel's static
 * CPU libccl.a refers to, all NULL: ITT calls go through these pointers and are skipped
 * when they are NULL, which is what happens when no profiler is attached.  Linked only into
 * bench/compare's oneCCL benchmark.
 */
#include <stddef.h>

void *__itt_domain_create_ptr__3_0 = NULL;
void *__itt_event_create_ptr__3_0 = NULL;
void *__itt_event_end_ptr__3_0 = NULL;
void *__itt_event_start_ptr__3_0 = NULL;
void *__itt_metadata_add_ptr__3_0 = NULL;
void *__itt_string_handle_create_ptr__3_0 = NULL;
void *__itt_task_begin_ptr__3_0 = NULL;
void *__itt_task_end_ptr__3_0 = NULL;
void *__itt_thread_set_name_ptr__3_0 = NULL;
