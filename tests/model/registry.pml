/* SPDX-License-Identifier: MIT */
/*
 * The registry's publication protocol (runtime/registry.h, rules P1-P9), as
 * runtime/registry.cc, runtime/slot_table.h and Runtime::walkComplete implement it,
 * for spin. docs/model.md maps it to the code and gives the bounds and state counts.
 *
 * Every statement that touches shared state names, in its comment, the code function it
 * models and the rule it follows (tests/model/trail.py prints a counterexample with
 * them; tests/model/rules_cited.sh checks that every rule of registry.h is cited here).
 *
 * Processes: two writers (the CVM lock and the loader mutex serialise them, as in the
 * code), one lock-free walker (one walkComplete) and one lock-free lookup
 * (entryPoint()). Spin's interleavings are sequentially consistent: a statement is one
 * memory access (or a group a reader cannot tell apart), every interleaving of them is
 * explored. What release/acquire adds is left to TSan and the fault builds, except the
 * two relaxed-store faults, modelled as the reordering they allow (docs/model.md).
 *
 * A protocol fault of meson_options.txt is selected with spin -DFAULT_<NAME>
 * (FAULT_RELAXED_HEAD, ...): the same hook as runtime/protocol_faults.h, broken the same
 * way.
 */

#define NM 2        /* method slots 1..NM (slot 0 unused: no id is 0) */
#define NV 3        /* version slots 1..NV */
#define NR 3        /* code ranges (host mode: the host's addresses) */
#define NID 16      /* ids: generation * 4 + slot index, generations 0..MAXGEN */
#define MAXGEN 3
#define FREE 128    /* the id word's "free" bit (SlotTable::kFree) */
#define ID(gen, idx) ((gen) * 4 + (idx))
#define LIVE(w) ((w) != 0 && ((w) & FREE) == 0)

#ifndef W1OPS
#define W1OPS 2     /* operations of writer 1: beginJit+publishCode, activate */
#endif
#ifndef W2OPS
#define W2OPS 2     /* operations of writer 2: retire, unload, register, publishHostCode */
#endif
#ifndef LOOKUPS
#define LOOKUPS 2   /* entryPoint() calls of the lookup */
#endif

#include "faults.pml"  /* the protocol faults: one hook each, as runtime/protocol_faults.h */

byte seq;           /* State::seq, the publication sequence (P8) */
byte cvm;           /* the CVM lock: 0 free, else the holder's _pid + 1 */
byte loader;        /* the loader mutex */

/* The method table (SlotTable<Method>): the slot's id word, then the record in place. */
byte m_idw[NM + 1];     /* id word: 0 never used, the id, or id | FREE (P9) */
byte m_id[NM + 1];      /* the occupant's id (P5): Method::id() reads it from the id word, masked (SlotTable::idOf) */
bit m_names[NM + 1];    /* its strings in the module's NameArena are allocated (P5) */
bit m_il[NM + 1];       /* Method::il_head != null (one IL version: rejit 0) */
bit m_ilinit[NM + 1];   /* that IlVersion node is initialised (native_head = null) */
byte m_nhead[NM + 1];   /* IlVersion::native_head: a version slot, 0 = null */
byte m_active[NM + 1];  /* IlVersion::active_native: CVM lock only (P3) */
byte m_ep[NM + 1];      /* Method::entry_point: the active version's id, 0 = none */
byte m_lps[NM + 1];     /* Method::last_publish_seq (P8) */
/* The table's writer-side state (claim/recycle) and the ghosts of the record's life. */
byte m_gen[NM + 1];     /* the generation the next occupant gets */
bit m_free[NM + 1];     /* recycled: claim() may take it */
byte m_claimed;         /* SlotTable::claimed_hw_ */
byte m_hw;              /* SlotTable::hw_, published high-water mark (P5) */
bit m_init[NM + 1];     /* ghost: a record is constructed in the slot */
bit m_known[NM + 1];    /* ghost: registerMethod returned its id to the host */
byte m_occ[NM + 1];     /* ghost: bumped when a record is constructed or destroyed */

/* The version table (SlotTable<NativeVersion>). */
byte v_idw[NV + 1];
byte v_vid[NV + 1];     /* NativeVersion::version_id (immutable) */
byte v_meth[NV + 1];    /* NativeVersion::method(), il->method: a method slot (immutable) */
byte v_next[NV + 1];    /* NativeVersion::next: a version slot, 0 = null */
byte v_start[NV + 1];   /* NativeVersion::code_start: a code range, 0 = not published */
byte v_size[NV + 1];    /* NativeVersion::code_size */
byte v_seq[NV + 1];     /* NativeVersion::publish_seq */
byte v_gen[NV + 1];
bit v_free[NV + 1];
byte v_claimed;
bit v_init[NV + 1];
byte v_occ[NV + 1];

bit range_used[NR + 1]; /* State::live_ranges (P7) */

/* Ghosts, by id: what each publication and removal was. */
bit g_vissued[NID];     /* version ids handed out */
bit g_missued[NID];     /* method ids handed out */
byte g_pub[NID];        /* publish_seq of the version, 0 = not published */
byte g_rem[NID];        /* the number of the removal that took it, 0 = none */
byte g_start[NID];      /* the code range it was published with */
byte g_mid[NID];        /* its method's id */

/* RCU read sections (rcu::ReadSection): reader 0 the walker, 1 the lookup. */
bit rs_in[2];
byte rs_cnt[2];

/* ---------------------------------------------------------------------------------- */
/* The writers' helpers */

inline lock_cvm() {
  atomic { cvm == 0 -> cvm = _pid + 1 }  /* CvmLock::Guard: writers serialised (P8: seq has one writer) */
}
inline unlock_cvm() {
  cvm = 0  /* ~CvmLock::Guard */
}
inline lock_loader() {
  atomic { loader == 0 -> loader = _pid + 1 }  /* std::lock_guard(loader), P5 */
}
inline unlock_loader() {
  loader = 0  /* ~lock_guard(loader) */
}

/* A live method (id word live), chosen by the host; mi = 0 when none. */
inline pick_method(mi) {
  if
  :: LIVE(m_idw[1]) && m_known[1] -> mi = 1  /* methods.load(id), P9 */
  :: LIVE(m_idw[2]) && m_known[2] -> mi = 2  /* methods.load(id), P9 */
  :: else -> mi = 0
  fi
}
inline pick_version(s) {
  if
  :: LIVE(v_idw[1]) -> s = 1  /* versions.load(id), P9 */
  :: LIVE(v_idw[2]) -> s = 2  /* versions.load(id), P9 */
  :: LIVE(v_idw[3]) -> s = 3  /* versions.load(id), P9 */
  :: else -> s = 0
  fi
}

/* SlotTable::claim (writer lock held): the lowest recycled index, else a fresh one; the
   id is the slot's next generation, never handed out before (P9). s = 0: table full. */
inline claim_version(s, vid) {
  d_step {  /* SlotTable::claim, P9: lowest free index, next generation */
    s = 1;
    do
    :: s <= NV && !v_free[s] -> s++
    :: else -> break
    od;
    if
    :: s <= NV -> v_free[s] = 0
    :: else ->
       if
       :: v_claimed < NV -> v_claimed++; s = v_claimed
       :: else -> s = 0
       fi
    fi;
    if
    :: s != 0 ->
       vid = ID(v_gen[s], s);
       assert(!g_vissued[vid]);  /* ids never handed out twice (P9) */
       g_vissued[vid] = 1
    :: else -> vid = 0
    fi
  }
}

/* The NativeVersion constructor, in the claimed slot (P1: every field before the link). */
inline construct_version(s, vid, mi, nxt) {
  d_step {  /* Runtime::beginJit: new (slot.storage) NativeVersion(..., next), P1 */
    v_init[s] = 1; v_occ[s]++; v_vid[s] = vid; v_meth[s] = mi;
    v_start[s] = 0; v_size[s] = 0; v_seq[s] = 0; g_mid[vid] = m_id[mi];
    v_next[s] = nxt
  }
}

/* State::freeVersion + SlotTable::recycle: destroy the record, offer the slot to the
   next generation (a generation that would pass MAXGEN retires the slot for good). */
inline destroy_version(s) {
  v_init[s] = 0; v_occ[s]++;
  v_next[s] = 0; v_start[s] = 0; v_size[s] = 0; v_seq[s] = 0; v_vid[s] = 0;
  if
  :: v_gen[s] < MAXGEN -> v_gen[s]++; v_free[s] = 1
  :: else -> skip
  fi
}

/* The grace period (rcu::synchronize, or call_rcu's callback, P4): wait until every
   read section that was running when the wait began has ended. */
inline grace_period() {
  d_step {  /* rcu::synchronize, P4: the readers in a read section now */
    snap_in0 = rs_in[0]; snap_c0 = rs_cnt[0];
    snap_in1 = rs_in[1]; snap_c1 = rs_cnt[1]
  }
  (!snap_in0 || !rs_in[0] || rs_cnt[0] != snap_c0) &&
  (!snap_in1 || !rs_in[1] || rs_cnt[1] != snap_c1)  /* rcu::synchronize returns, P4 */
}

/* State::activeIlOrCreate, CVM lock held: the method's first IL version (P1). */
inline active_il_or_create(mi) {
  if
  :: !m_il[mi] ->
     IL_INIT_BEFORE_LINK;  /* State::activeIlOrCreate: new IlVersion(0, nullptr), P1 */
     m_il[mi] = 1;         /* fault::linkIlVersion: publish(il_head), P1 */
     IL_INIT_AFTER_LINK    /* fault relaxed-il-head: the IlVersion's initialisation visible after il_head (P1 broken) */
  :: else -> skip
  fi
}

/* Runtime::beginJit then Runtime::publishCode (model-heap mode): two lock sections. */
inline jit_and_publish() {
  lock_cvm();
  pick_method(mi);
  if
  :: mi == 0 -> unlock_cvm()
  :: else ->
     active_il_or_create(mi);
     claim_version(s, vid);
     if
     :: s == 0 -> unlock_cvm()
     :: else ->
        old = m_nhead[mi];
        INIT_BEFORE_LINK(construct_version(s, vid, mi, INITIAL_NEXT));  /* Runtime::beginJit: NativeVersion constructed, next = fault::initialNext(old head), P1 */
        v_idw[s] = vid;    /* Runtime::beginJit: versions.commit(slot), P9 */
        m_nhead[mi] = s;   /* fault::linkNativeVersion: publish(native_head), P1 */
        INIT_AFTER_LINK(construct_version(s, vid, mi, old));  /* fault relaxed-head: the node's initialisation visible after the head (P1 broken) */
        NEXT_AFTER_LINK;   /* fault link-before-init: fault::linkNativeVersion writes next after the link (P1 broken) */
        unlock_cvm();

        lock_cvm();
        if
        :: v_idw[s] != vid -> unlock_cvm()  /* publishOnce: versions.load(id) finds nothing, P9 */
        :: else ->
           d_step {  /* CodeHeap::allocate: a free range, P7 */
             r = 1;
             do
             :: r <= NR && range_used[r] -> r++
             :: else -> break
             od
           }
           if
           :: r > NR -> unlock_cvm()  /* kCodeHeapExhausted */
           :: else ->
              range_used[r] = 1;
              d_step {  /* State::takePublicationSeq: publish_seq = seq + 1, P8 */
                sq = seq + 1; v_seq[s] = sq; g_pub[vid] = sq; g_start[vid] = r
              }
              SIZE_BEFORE_START;  /* fault::publishCode: code_size, P2 */
              v_start[s] = r;     /* fault::publishCode: publish(code_start), P2 */
              SIZE_AFTER_START;   /* fault relaxed-code-start: code_size written after code_start (P2 broken) */
              m_lps[mi] = sq;    /* State::completePublication: last_publish_seq, P8 */
              seq = sq;          /* State::completePublication: publish(seq), P8 */
              unlock_cvm()
           fi
        fi
     fi
  fi
}

/* Runtime::publishHostCode (host mode): one lock section, the node linked published. */
inline host_publish() {
  lock_cvm();
  pick_method(mi);
  d_step {  /* State::overlapping: a range no live version holds, P7 */
    r = 1;
    do
    :: r <= NR && range_used[r] -> r++
    :: else -> break
    od
  }
  if
  :: mi == 0 || r > NR -> unlock_cvm()  /* unknown method, or kRangeOverlap */
  :: else ->
     active_il_or_create(mi);
     claim_version(s, vid);
     if
     :: s == 0 -> unlock_cvm()
     :: else ->
        range_used[r] = 1;  /* live_ranges.emplace, P7 */
        d_step {  /* Runtime::publishHostCode: constructed with its code and publish_seq, P1 P2 P8 */
          sq = seq + 1;
          v_init[s] = 1; v_occ[s]++; v_vid[s] = vid; v_meth[s] = mi; v_next[s] = m_nhead[mi];
          v_start[s] = r; v_size[s] = vid; v_seq[s] = sq;
          g_mid[vid] = m_id[mi]; g_pub[vid] = sq; g_start[vid] = r
        }
        v_idw[s] = vid;    /* Runtime::publishHostCode: versions.commit(slot), P9 */
        m_nhead[mi] = s;   /* Runtime::publishHostCode: publish(native_head), P1 P2 */
        m_lps[mi] = sq;    /* State::completePublication: last_publish_seq, P8 */
        seq = sq;          /* State::completePublication: publish(seq), P8 */
        unlock_cvm()
     fi
  fi
}

/* Runtime::activate: a published version becomes its IL version's active one (P3). */
inline activate() {
  lock_cvm();
  if
  :: LIVE(v_idw[1]) && v_start[1] != 0 -> s = 1  /* versions.load(id), code_start != 0, P9 P2 */
  :: LIVE(v_idw[2]) && v_start[2] != 0 -> s = 2  /* versions.load(id), code_start != 0, P9 P2 */
  :: LIVE(v_idw[3]) && v_start[3] != 0 -> s = 3  /* versions.load(id), code_start != 0, P9 P2 */
  :: else -> s = 0
  fi;
  if
  :: s != 0 ->
     mi = v_meth[s];
     m_active[mi] = s;       /* Runtime::activate: il->active_native = v (lock only), P3 */
     m_ep[mi] = v_vid[s]     /* Runtime::activate: publish(entry_point), P3 P2 */
  :: else -> skip
  fi;
  unlock_cvm()
}

/* Runtime::retireVersion: unlink under the lock, reclaim after a grace period (P6). */
inline retire() {
  lock_cvm();
  pick_version(s);
  if
  :: s == 0 -> unlock_cvm()
  :: else ->
     vid = v_idw[s]; mi = v_meth[s];
     d_step {  /* Runtime::retireVersion: find what points at v (lock held), P6 */
       pred = 0;
       if
       :: m_nhead[mi] != s ->
          pred = m_nhead[mi];
          do
          :: pred != 0 && v_next[pred] != s -> pred = v_next[pred]
          :: else -> break
          od
       :: else -> skip
       fi
     }
     d_step {  /* State::takeRemovalSeq: publish(seq, r) before the unlink, P8 */
       seq = seq + 1; g_rem[vid] = seq
     }
     if
     :: pred == 0 -> m_nhead[mi] = v_next[s]  /* Runtime::retireVersion: publish(*link, v->next), P6 */
     :: else -> v_next[pred] = v_next[s]      /* Runtime::retireVersion: publish(*link, v->next), P6 */
     fi;
     AFTER_UNLINK;  /* fault::afterUnlink: nothing (unlink-poison-next: v->next cleared, P6 broken) */
     v_idw[s] = vid | FREE;  /* Runtime::retireVersion: versions.clear(version), P9 */
     d_step {  /* Runtime::retireVersion: live_ranges.erase (P7); entry point reset, P3 */
       range_used[v_start[s]] = 0; range_used[0] = 0;
       if
       :: m_active[mi] == s -> m_active[mi] = 0; m_ep[mi] = 0
       :: else -> skip
       fi
     }
     RETIRED_AT_ONCE(d_step { destroy_version(s) });  /* fault retire-reuse-without-grace: fault::reclaimRetiredAtOnce frees it now (P4 P9 broken) */
     unlock_cvm();
     RETIRED_LATER(grace_period());  /* State::reclaimLater: rcu::synchronize (or call_rcu), P4 P6 */
     RETIRED_LATER(d_step { destroy_version(s) })  /* State::reclaimBatch: freeVersion, recycle, P4 P9 */
  fi
}

/* State::reclaimModule (its one method: State::freeMethod): the method's versions, its
   IL version and the method, destroyed; the slots recycled (P4, P9). */
inline destroy_method(mi) {
  d_step {  /* State::reclaimModule: freeMethod, freeVersion, recycle, P4 P9 */
    s = m_nhead[mi];
    do
    :: s != 0 -> pred = v_next[s]; destroy_version(s); s = pred
    :: else -> break
    od;
    m_init[mi] = 0; m_occ[mi]++; m_known[mi] = 0; m_names[mi] = 0; m_il[mi] = 0; m_ilinit[mi] = 0;
    m_nhead[mi] = 0; m_active[mi] = 0; m_ep[mi] = 0; m_lps[mi] = 0; m_id[mi] = 0;
    if
    :: m_gen[mi] < MAXGEN -> m_gen[mi]++; m_free[mi] = 1
    :: else -> skip
    fi
  }
}

/* Runtime::unloadModule: a module of one method (P4, P5, P8, P9). */
inline unload() {
  lock_loader();
  pick_method(mi);
  if
  :: mi == 0 -> unlock_loader()
  :: else ->
     lock_cvm();
     d_step {  /* State::takeRemovalSeq: unload_seq, before any slot is cleared, P8 */
       seq = seq + 1;
       s = m_nhead[mi];
       do
       :: s != 0 -> g_rem[v_vid[s]] = seq; s = v_next[s]
       :: else -> break
       od
     }
     m_idw[mi] = m_id[mi] | FREE;  /* Runtime::unloadModule: methods.clear(m->id), P4 P9 */
     d_step {  /* Runtime::unloadModule: versions.clear, live_ranges.erase, P9 P7 */
       s = m_nhead[mi];
       do
       :: s != 0 -> v_idw[s] = v_vid[s] | FREE; range_used[v_start[s]] = 0; s = v_next[s]
       :: else -> break
       od;
       range_used[0] = 0
     }
     unlock_cvm();
     AFTER_UNLOAD;  /* fault::afterUnload: nothing (unload-names-without-grace: the NameArena freed now, P5 broken) */
     unlock_loader();
     UNLOAD_GRACE;  /* fault::reclaimModule: reclaimLater waits for a grace period, P4 (unload-reuse-without-grace: not, P4 P9 broken) */
     destroy_method(mi)
  fi
}

/* Runtime::registerModule + registerMethod: a new module with one method (P5, P9). */
inline register_method() {
  lock_loader();
  d_step {  /* SlotTable::claim (methods), P9: lowest free index, next generation */
    mi = 1;
    do
    :: mi <= NM && !m_free[mi] -> mi++
    :: else -> break
    od;
    if
    :: mi <= NM -> m_free[mi] = 0
    :: else ->
       if
       :: m_claimed < NM -> m_claimed++; mi = m_claimed
       :: else -> mi = 0
       fi
    fi
  }
  if
  :: mi == 0 -> unlock_loader()  /* kTooManyMethods */
  :: else ->
     d_step {  /* Runtime::registerMethod: names copied, Method constructed in its slot, P5 */
       vid = ID(m_gen[mi], mi);
       assert(!g_missued[vid]);  /* ids never handed out twice (P9) */
       g_missued[vid] = 1;
       m_init[mi] = 1; m_occ[mi]++; m_id[mi] = vid; m_names[mi] = 1;
       m_il[mi] = 0; m_ilinit[mi] = 0; m_nhead[mi] = 0; m_active[mi] = 0; m_ep[mi] = 0; m_lps[mi] = 0
     }
     m_idw[mi] = vid;  /* SlotTable::commit: publish(id word), P9 P5 */
     if
     :: mi > m_hw -> m_hw = mi  /* SlotTable::commit: publish(hw_), P5 */
     :: else -> skip
     fi;
     m_known[mi] = 1;  /* Runtime::registerMethod returns the id to the host */
     unlock_loader()
  fi
}

proctype writer1() {
  byte mi, s, vid, old, r, sq, n;
  do
  :: n < W1OPS ->
     n++;
     if
     :: jit_and_publish()
     :: activate()
     fi;
     atomic { mi = 0; s = 0; vid = 0; old = 0; r = 0; sq = 0 }  /* (dead locals cleared: fewer states) */
  :: else -> break
  od
}

proctype writer2() {
  byte mi, s, vid, old, r, sq, pred, n;
  bit snap_in0, snap_in1;
  byte snap_c0, snap_c1;
  do
  :: n < W2OPS ->
     n++;
     if
     :: retire()
     :: unload()
     :: register_method()
     :: host_publish()
     fi;
     atomic {  /* (dead locals cleared: fewer states) */
       mi = 0; s = 0; vid = 0; old = 0; r = 0; sq = 0; pred = 0;
       snap_in0 = 0; snap_in1 = 0; snap_c0 = 0; snap_c1 = 0
     }
  :: else -> break
  od
}

/* ---------------------------------------------------------------------------------- */
/* The lock-free walk: Runtime::walkComplete, walkImpl, visitMethod (P1, P2, P5, P6, P8). */

inline walk_pass(after, upto) {
  hw = m_hw;  /* walkImpl: methods.highWater(), P5 */
  d_step { rs_in[0] = 1; rs_cnt[0]++ }  /* walkImpl: rcu::ReadSection, P4 */
  i = 1;
  do
  :: i > hw -> break
  :: i <= hw ->
     atomic { w = m_idw[i]; mocc = m_occ[i] }  /* walkImpl: methods.at(index), P9 */
     if
     :: LIVE(w) ->
        assert(m_init[i] && m_occ[i] == mocc);  /* P9: a live id word, a constructed record */
        atomic { assert(m_occ[i] == mocc); lps = m_lps[i] }  /* walkImpl: last_publish_seq (catch-up), P8 */
        if
        :: after != 0 && lps <= after -> skip  /* walkImpl: nothing of it after `after`, P8 */
        :: else ->
           atomic { assert(m_occ[i] == mocc); il = m_il[i] }  /* visitMethod: readPublished(il_head), P1 */
           if
           :: il ->
              atomic {  /* visitMethod: readPublished(native_head), P1 */
                assert(m_occ[i] == mocc && m_ilinit[i]);
                v = m_nhead[i];
                if :: v != 0 -> assert(v_init[v]); vocc = v_occ[v] :: else -> skip fi
              }
              do
              :: v == 0 -> break
              :: v != 0 ->
                 atomic { assert(v_occ[v] == vocc); start = v_start[v] }  /* visitMethod: readPublished(code_start), P2 */
                 if
                 :: start == 0 -> skip  /* visitMethod: not compiled yet (skipped), P2 */
                 :: else ->
                    atomic {  /* viewOf: version_id, code_size, publish_seq after code_start, P2 P8 */
                      assert(v_occ[v] == vocc); vid = v_vid[v]; sz = v_size[v]; sq = v_seq[v]
                    }
                    if
                    :: sq > after && sq <= upto ->
                       atomic {  /* visit(viewOf(*m, *v, start)): G2, G4, P5 */
                         assert(m_occ[i] == mocc && m_names[i]);  /* the method's strings (P5) */
                         assert(vid > 0 && vid < NID);
                         assert(g_start[vid] == start && vid == sz && g_pub[vid] == sq && g_mid[vid] == m_id[i]);  /* G2 */
                         assert(!rep[vid]);  /* G4 */
                         rep[vid] = 1
                       }
                    :: else -> skip  /* visitMethod: publish_seq outside (after, upto], P8 */
                    fi
                 fi;
                 atomic { start = 0; vid = 0; sz = 0; sq = 0 }  /* (dead locals cleared) */
                 atomic {  /* visitMethod: readPublished(v->next), P6 */
                   assert(v_occ[v] == vocc);
                   v = v_next[v];
                   if :: v != 0 -> assert(v_init[v]); vocc = v_occ[v] :: else -> skip fi
                 }
              od
           :: else -> skip
           fi
        fi
     :: else -> skip  /* walkImpl: free, or unloaded */
     fi;
     atomic { i++; w = 0; mocc = 0; lps = 0; il = 0; v = 0; vocc = 0 }  /* (dead locals cleared) */
  od;
  rs_in[0] = 0  /* walkImpl: the read section ends, P4 */
}

proctype walker() {
  byte B, P, PMAX, E, hw, i, w, mocc, lps, v, vocc, start, vid, sz, sq, id;
  bit il;
  bit rep[NID];
  B = seq;  /* walkComplete: begin_seq = publicationSeq(), P8 */
  if
  :: WALK_COMPLETE ->
     walk_pass(0, B);
     P = seq;  /* walkComplete: publish_seq = publicationSeq(), P8 */
     if
     :: CATCH_UP && P != B -> walk_pass(B, P)  /* walkComplete: the catch-up, (B, P], P8 (no-catch-up: none) */
     :: else -> skip
     fi;
     PMAX = P
  :: else ->
     walk_pass(0, 255);  /* Runtime::walk: every published version, P1 P2 P6 */
     P = B; PMAX = 255   /* G3: complete as of its begin; no upper bound */
  fi;
  E = seq;  /* walkComplete: end_seq = publicationSeq(), P8 */
  d_step {  /* G3+ and G4, checked against every publication and removal (P8) */
    id = 1;
    do
    :: id < NID ->
       if
       :: g_pub[id] != 0 && g_pub[id] <= P && !(g_rem[id] != 0 && g_rem[id] <= E) ->
          if :: !rep[id] -> printf("G3+: version %d (publish_seq %d, P %d, E %d) not reported\n", id, g_pub[id], P, E) :: else -> skip fi;
          assert(rep[id])  /* G3+: published <= P, not removed <= E: reported */
       :: else -> skip
       fi;
       if
:: rep[id] -> assert(g_pub[id] != 0 && g_pub[id] <= PMAX)  /* G3+: nothing past P */
       :: else -> skip
       fi;
       id++
    :: else -> break
    od
  }
}

/* Runtime::entryPoint: a lock-free lookup by method id, the id held from the start
   (stale once its method is unloaded), or its slot's next id (P9, P2, P3). */
proctype lookup() {
  byte k, id, idx, w, mocc, ep;
  do
  :: k < LOOKUPS ->
     k++;
     if
     :: id = 1
     :: id = ID(1, 1)
     fi;
     idx = id % 4;
     d_step { rs_in[1] = 1; rs_cnt[1]++ }  /* Runtime::entryPoint: rcu::ReadSection, P4 */
     atomic { w = m_idw[idx]; mocc = m_occ[idx] }  /* Runtime::entryPoint: methods.load(id), P9 */
     if
     :: w == id ->
        assert(m_init[idx] && m_id[idx] == id);  /* P9: the record with that id, never another */
        atomic { assert(m_occ[idx] == mocc); ep = m_ep[idx] }  /* Runtime::entryPoint: readPublished(entry_point), P2 P3 */
        assert(ep == 0 || (g_pub[ep] != 0 && g_mid[ep] == id))  /* published code of this method (P2) */
     :: else -> skip  /* a stale or unknown id finds nothing (P9) */
     fi;
     atomic { w = 0; mocc = 0; ep = 0; idx = 0; id = 0 }  /* (dead locals cleared) */
     rs_in[1] = 0  /* Runtime::entryPoint: the read section ends, P4 */
  :: else -> break
  od
}

init {
  d_step {  /* the initial registry: method 1 (module 1) with versions 2 -> 1, version 2 active */
    m_claimed = 1; m_hw = 1; g_missued[1] = 1;
    m_idw[1] = 1; m_id[1] = 1; m_known[1] = 1; m_init[1] = 1; m_occ[1] = 1; m_names[1] = 1;
    m_il[1] = 1; m_ilinit[1] = 1; m_nhead[1] = 2; m_active[1] = 2; m_ep[1] = 2; m_lps[1] = 2;
    v_claimed = 2;
    v_idw[1] = 1; v_vid[1] = 1; v_meth[1] = 1; v_next[1] = 0; v_start[1] = 1; v_size[1] = 1; v_seq[1] = 1;
    v_init[1] = 1; v_occ[1] = 1;
    v_idw[2] = 2; v_vid[2] = 2; v_meth[2] = 1; v_next[2] = 1; v_start[2] = 2; v_size[2] = 2; v_seq[2] = 2;
    v_init[2] = 1; v_occ[2] = 1;
    range_used[1] = 1; range_used[2] = 1;
    g_vissued[1] = 1; g_vissued[2] = 1; g_pub[1] = 1; g_pub[2] = 2; g_start[1] = 1; g_start[2] = 2;
    g_mid[1] = 1; g_mid[2] = 1;
    seq = 2
  }
  atomic {
    run writer1(); run writer2(); run walker(); run lookup()
  }
}
