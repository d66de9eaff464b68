/* SPDX-License-Identifier: MIT */
/*
 * libjitprov-preload.so: what `jitprov record` preloads (LD_PRELOAD) into the command it
 * runs, for the one thing that has to happen before the runtime starts its threads: the
 * process's registration for private expedited membarrier(2).
 *
 * liburcu (the registry's RCU) and lttng-ust register the process in their constructors,
 * when an agent loads them. By then the runtime runs threads (node's platform workers,
 * the JVM's), and the kernel makes the registration of a process with more than one
 * thread wait for an RCU grace period (synchronize_rcu() in
 * membarrier_register_private_expedited()): 11 ms of node's main thread and 6 ms of the
 * JVM's on this project's VM, at every start. Registered while the process has one
 * thread, it takes microseconds, and the later registrations find it done and return
 * at once (docs/tracing.md, "What an agent's start waits for").
 *
 * Nothing else: no allocation, no thread, no library loaded. A process of the command
 * that never loads an agent (a shell, a compiler) makes these two system calls and is
 * otherwise as it was; exec() drops the registration, and the next program's own copy
 * of this library makes it again. `jitprov record` puts it last in LD_PRELOAD: the loader
 * runs the preloaded constructors last to first, so this one runs before the user's.
 */
#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

__attribute__((constructor)) static void jitprov_preload_membarrier(void) {
  const long cmds = syscall(__NR_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
  if (cmds > 0 && (cmds & MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) != 0)
    (void)syscall(__NR_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0);
}
