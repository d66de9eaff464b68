// fork() support: the child of a fork may go on using the runtimes it inherited.
//
// One set of pthread_atfork handlers for the process, installed with the first
// runtime. Before the fork they take every live runtime's loader mutex and CVM lock (in
// the lock order, runtime by runtime), so that no registration or code-version
// mutation is half done when the address space is copied, and pause liburcu's call_rcu
// threads; after it they release them in both processes. In the child, reclamation
// stops for good (rcu.h). Rundown engines keep no thread in the child (rundown.cc).
#include "fork.h"

#include "rcu.h"
#include "registry.h"

#include <pthread.h>

#include <algorithm>
#include <mutex>
#include <vector>

namespace jitprov::fork {

namespace {
std::mutex g_mu;  // guards g_runtimes; held across fork() by the handlers
std::vector<Runtime::State*>* g_runtimes = nullptr;  // never freed: handlers may run at exit
std::once_flag g_once;

// call_rcu's threads are paused first: one of them may be inside a grace period that
// waits for a reader which itself waits for a CVM lock (publishCode holds a read section
// across the lock); taking the locks first could deadlock.
void prepare() {
  rcu::beforeFork();
  g_mu.lock();
  if (g_runtimes != nullptr) {
    for (Runtime::State* s : *g_runtimes) {
      s->loader.lock();
      s->lock.lockForFork();
    }
  }
}

void release() {
  if (g_runtimes != nullptr) {
    for (auto it = g_runtimes->rbegin(); it != g_runtimes->rend(); ++it) {
      (*it)->lock.unlockAfterFork();
      (*it)->loader.unlock();
    }
  }
  g_mu.unlock();
}

void parent() {
  release();
  rcu::afterForkParent();
}

void child() {
  release();
  rcu::afterForkChild();
}
}  // namespace

void track(Runtime::State* s) {
  std::call_once(g_once, [] { pthread_atfork(&prepare, &parent, &child); });
  std::lock_guard<std::mutex> g(g_mu);
  if (g_runtimes == nullptr) g_runtimes = new std::vector<Runtime::State*>();
  g_runtimes->push_back(s);
}

void untrack(Runtime::State* s) noexcept {
  std::lock_guard<std::mutex> g(g_mu);
  if (g_runtimes != nullptr) g_runtimes->erase(std::remove(g_runtimes->begin(), g_runtimes->end(), s), g_runtimes->end());
}

}  // namespace jitprov::fork
