/*
 * count_kernel_copies.c — a preload for tests: counts this process's kernel single copies
 * of at least 4 KiB (process_vm_readv / process_vm_writev through libc; shm set-up's probe
 * reads 8 bytes) and prints the count at exit in a rank of collie-run (COLLIE_RANK set):
 *   "rank R: kernel copies of 4 KiB or more: N"
 * run_path_tune.sh uses it to check that COLLIE_SHM_KERNEL_MIN=0 means no kernel copy on
 * any path, and that the count does see them when they are allowed.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <sys/uio.h>

typedef ssize_t (*vm_copy_fn)(pid_t, const struct iovec *, unsigned long, const struct iovec *,
                              unsigned long, unsigned long);

static unsigned long copies;

static void count(const struct iovec *v, unsigned long n) {
    size_t bytes = 0;
    for (unsigned long i = 0; i < n; i++)
        bytes += v[i].iov_len;
    if (bytes >= 4096)
        __atomic_add_fetch(&copies, 1, __ATOMIC_RELAXED);
}

ssize_t process_vm_readv(pid_t pid, const struct iovec *local, unsigned long nlocal,
                         const struct iovec *remote, unsigned long nremote, unsigned long flags) {
    vm_copy_fn real = (vm_copy_fn)dlsym(RTLD_NEXT, "process_vm_readv");
    count(local, nlocal);
    return real(pid, local, nlocal, remote, nremote, flags);
}

ssize_t process_vm_writev(pid_t pid, const struct iovec *local, unsigned long nlocal,
                          const struct iovec *remote, unsigned long nremote, unsigned long flags) {
    vm_copy_fn real = (vm_copy_fn)dlsym(RTLD_NEXT, "process_vm_writev");
    count(local, nlocal);
    return real(pid, local, nlocal, remote, nremote, flags);
}

__attribute__((destructor)) static void report(void) {
    const char *rank = getenv("COLLIE_RANK");
    if (rank)
        fprintf(stderr, "rank %s: kernel copies of 4 KiB or more: %lu\n", rank,
                __atomic_load_n(&copies, __ATOMIC_RELAXED));
}
