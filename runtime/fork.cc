// SPDX-License-Identifier: MIT
// fork() support: the child of a fork may go on using the runtimes it inherited.
//
// One set of pthread_atfork handlers for the process, installed with the first runtime
// or engine. Before the fork they pause liburcu (rcu.h), then take every live runtime's
// loader mutex and CVM lock (in the lock order, runtime by runtime), then every
// engine's locks, so that no registration, code-version mutation or engine bookkeeping
// is half done when the address space is copied; after it they release them in both
// processes, in the reverse order.
#include "fork.h"

#include "rcu.h"
#include "registry.h"

#include <pthread.h>

#include <algorithm>
#include <mutex>
#include <new>
#include <shared_mutex>
#include <vector>

namespace jitprov::fork {

namespace {
std::mutex g_mu;  // guards the two lists; held across fork() by the handlers
// Never freed: handlers may run at exit.
std::vector<Runtime::State*>* g_runtimes = nullptr;
std::vector<Hooks>* g_hooks = nullptr;
std::once_flag g_once;

// liburcu first: one of its call_rcu threads may be inside a grace period that waits
// for a reader which itself waits for a CVM lock (publishCode holds a read section
// across the lock); taking the locks first could deadlock.
void prepare() {
  rcu::beforeFork();
  g_mu.lock();
  for (Runtime::State* s : *g_runtimes) {
    s->rundown_turn_mu.lock();  // held only while a rundown_begin is emitted
    s->reclaim_mu.lock();       // first: a reclamation in progress takes the heap's mutex
    s->loader.lock();
    s->lock.lockForFork();
    s->retire_batch_mu.lock();  // after the CVM lock: the lock order of retireVersion()
    s->heap.lockForFork();
  }
  for (const Hooks& h : *g_hooks) h.prepare(h.ctx);
}

void release(bool child) {
  for (auto it = g_hooks->rbegin(); it != g_hooks->rend(); ++it) (child ? it->child : it->parent)(it->ctx);
  for (auto it = g_runtimes->rbegin(); it != g_runtimes->rend(); ++it) {
    (*it)->heap.unlockAfterFork();
    (*it)->retire_batch_mu.unlock();
    (*it)->lock.unlockAfterFork();
    (*it)->loader.unlock();
    if (child) {
      // A reader-writer lock keeps count of the readers waiting on it, and the parent's
      // (a call_rcu thread's reclamation) are not in the child: a fresh one, held by none.
      new (&(*it)->reclaim_mu) std::shared_mutex();
      (*it)->jitdumpForgetInChild();  // the parent's file is the parent's
    } else {
      (*it)->reclaim_mu.unlock();
    }
    (*it)->rundown_turn_mu.unlock();
  }
  g_mu.unlock();
}

void parent() {
  release(false);
  rcu::afterForkParent();
}

void child() {
  release(true);
  rcu::afterForkChild();
}

void installOnce() {
  std::call_once(g_once, [] {
    g_runtimes = new std::vector<Runtime::State*>();
    g_hooks = new std::vector<Hooks>();
    pthread_atfork(&prepare, &parent, &child);
  });
}
}  // namespace

void track(Runtime::State* s) {
  installOnce();
  std::lock_guard<std::mutex> g(g_mu);
  g_runtimes->push_back(s);
}

void untrack(Runtime::State* s) noexcept {
  std::lock_guard<std::mutex> g(g_mu);
  if (g_runtimes != nullptr) std::erase(*g_runtimes, s);
}

void trackHooks(const Hooks& h) {
  installOnce();
  std::lock_guard<std::mutex> g(g_mu);
  g_hooks->push_back(h);
}

void untrackHooks(void* ctx) noexcept {
  std::lock_guard<std::mutex> g(g_mu);
  if (g_hooks != nullptr) std::erase_if(*g_hooks, [ctx](const Hooks& h) { return h.ctx == ctx; });
}

}  // namespace jitprov::fork
