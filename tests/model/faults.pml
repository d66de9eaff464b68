/* SPDX-License-Identifier: MIT */
/* The protocol faults (runtime/protocol_faults.h), each a hook of the code: the rule's
   statement, or the broken one. Single-line macros, so that no #if sits inside a
   Promela body (spin's line numbers, which the trails print, stay right). */
#ifdef FAULT_RELAXED_HEAD
#define INIT_BEFORE_LINK(x) skip
#define INIT_AFTER_LINK(x) x
#else
#define INIT_BEFORE_LINK(x) x
#define INIT_AFTER_LINK(x) skip
#endif
#ifdef FAULT_LINK_BEFORE_INIT
#define INITIAL_NEXT 0
#define NEXT_AFTER_LINK v_next[s] = old
#else
#define INITIAL_NEXT old
#define NEXT_AFTER_LINK skip
#endif
#ifdef FAULT_RELAXED_IL_HEAD
#define IL_INIT_BEFORE_LINK skip
#define IL_INIT_AFTER_LINK m_ilinit[mi] = 1
#else
#define IL_INIT_BEFORE_LINK m_ilinit[mi] = 1
#define IL_INIT_AFTER_LINK skip
#endif
#ifdef FAULT_RELAXED_CODE_START
#define SIZE_BEFORE_START skip
#define SIZE_AFTER_START v_size[s] = vid
#else
#define SIZE_BEFORE_START v_size[s] = vid
#define SIZE_AFTER_START skip
#endif
#ifdef FAULT_UNLINK_POISON_NEXT
#define AFTER_UNLINK v_next[s] = 0
#else
#define AFTER_UNLINK skip
#endif
#ifdef FAULT_RETIRE_REUSE_WITHOUT_GRACE
#define RETIRED_AT_ONCE(x) x
#define RETIRED_LATER(x) skip
#else
#define RETIRED_AT_ONCE(x) skip
#define RETIRED_LATER(x) x
#endif
#ifdef FAULT_UNLOAD_NAMES_WITHOUT_GRACE
#define AFTER_UNLOAD m_names[mi] = 0
#else
#define AFTER_UNLOAD skip
#endif
#ifdef FAULT_UNLOAD_REUSE_WITHOUT_GRACE
#define UNLOAD_GRACE skip
#else
#define UNLOAD_GRACE grace_period()
#endif
#ifdef PLAIN_WALK
#define WALK_COMPLETE 0  /* the walker runs Runtime::walk(kNone): one pass, no bound */
#else
#define WALK_COMPLETE 1  /* the walker runs Runtime::walkComplete */
#endif
#ifdef FAULT_NO_CATCH_UP
#define CATCH_UP 0
#else
#define CATCH_UP 1
#endif
