/* SPDX-License-Identifier: MIT */
/* Two jitprov runtimes in one process, traced together, then a third made after the
 * first is destroyed: each hands out the same ids (module 1, methods 1.., versions ..),
 * so only the runtime instance every event carries tells them apart.
 *   jitprov-two-runtimes WORK_DIR
 * Writes WORK_DIR/ready once both runtimes have published and their engines run (on
 * the session trigger); waits for WORK_DIR/go; destroys the first, creates the third,
 * runs a rundown of the second and the third into every recording session, writes
 * WORK_DIR/done with the three instance numbers, and exits 0 (non-zero, with a line on
 * stderr, on any error). The third also has one method whose three names are longer
 * than an event carries (JITPROV_MAX_TRACE_STRING bytes): the namespace 4 095 'a' and
 * a two-byte character across the limit, the name 5 000 'b', the signature 4 096 'c'
 * and a 'd'; each event cuts each on a UTF-8 boundary, each into its own buffer.
 * Public C API only. */
#include <jitprov/jitprov.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define METHODS 200

static void die(const char* what, int e) {
  fprintf(stderr, "two-runtimes: %s: %s\n", what, jitprov_strerror(e));
  exit(1);
}

static void check(const char* what, int e) {
  if (e != JITPROV_OK) die(what, e);
}

/* Registers a method of `module` with these names and publishes its tier-1 code at
 * code_start (0x80 bytes). */
static void addMethod(jitprov_runtime* rt, uint64_t module, const char* ns, const char* name, const char* sig,
                      uint64_t code_start) {
  jitprov_method_desc d = JITPROV_METHOD_DESC_INIT;
  d.name_space = ns;
  d.name = name;
  d.signature = sig;
  uint64_t method = 0, version = 0;
  check("method register", jitprov_method_register(rt, module, &d, &method));
  jitprov_code_desc c = JITPROV_CODE_DESC_INIT;
  c.code_start = code_start;
  c.code_size = 0x80;
  c.tier = JITPROV_TIER1;
  check("code publish", jitprov_code_publish(rt, method, &c, &version));
}

/* A host-mode runtime with METHODS methods, each with code at base + i * 0x100. */
static jitprov_runtime* populate(const char* module_path, uint64_t base) {
  jitprov_runtime_config cfg = JITPROV_RUNTIME_CONFIG_INIT;
  cfg.code_mode = JITPROV_CODE_HOST;
  jitprov_runtime* rt = NULL;
  check("runtime create", jitprov_runtime_create(&cfg, &rt));
  uint64_t module = 0;
  check("module register", jitprov_module_register(rt, module_path, 0, &module));
  for (int i = 0; i < METHODS; ++i) {
    char name[32];
    snprintf(name, sizeof name, "M%d", i);
    addMethod(rt, module, module_path, name, i % 2 ? "void ()" : "", base + (uint64_t)i * 0x100);
  }
  return rt;
}

/* The method with overlong names, at base + METHODS * 0x100. */
static void addOverlong(jitprov_runtime* rt, uint64_t base) {
  static char ns[4095 + 3], name[5000 + 1], sig[4096 + 2];
  memset(ns, 'a', 4095);
  memcpy(ns + 4095, "\xC3\xA9", 3); /* U+00E9: bytes 4096 and 4097, and the NUL */
  memset(name, 'b', 5000);
  memset(sig, 'c', 4096);
  sig[4096] = 'd';
  uint64_t module = 0;
  check("module register", jitprov_module_register(rt, "/app/long.dll", 0, &module));
  addMethod(rt, module, ns, name, sig, base + (uint64_t)METHODS * 0x100);
}

static jitprov_rundown* engine(jitprov_runtime* rt) {
  jitprov_rundown_config rc = JITPROV_RUNDOWN_CONFIG_INIT;
  rc.triggers = "session";
  jitprov_rundown* rd = NULL;
  check("rundown create", jitprov_rundown_create(rt, &rc, &rd));
  check("rundown start", jitprov_rundown_start(rd));
  return rd;
}

static void touch(const char* dir, const char* name, const char* text) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE* f = fopen(path, "w");
  if (f == NULL || fputs(text, f) < 0 || fclose(f) != 0) {
    perror(path);
    exit(1);
  }
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: jitprov-two-runtimes WORK_DIR\n");
    return 2;
  }
  const char* dir = argv[1];
  jitprov_runtime* a = populate("/app/a.dll", 0x10000000);
  jitprov_runtime* b = populate("/app/b.dll", 0x20000000);
  jitprov_rundown* ra = engine(a);
  jitprov_rundown* rb = engine(b);
  /* Both engines' session rundowns (the session was recording before they started). */
  while (jitprov_rundown_completed(ra) < 1 || jitprov_rundown_completed(rb) < 1) usleep(10000);
  touch(dir, "ready", "1\n");
  char go[4096];
  snprintf(go, sizeof go, "%s/go", dir);
  while (access(go, F_OK) != 0) usleep(10000);
  const uint32_t ia = jitprov_runtime_instance(a), ib = jitprov_runtime_instance(b);
  jitprov_rundown_destroy(ra);
  jitprov_runtime_destroy(a);
  jitprov_runtime* c = populate("/app/c.dll", 0x30000000); /* ids from 1 again */
  addOverlong(c, 0x30000000);
  jitprov_rundown* rc = engine(c);
  /* Its session rundown first (the session records already): else it may begin after
   * the run_now below and be cut short by the destroy (a fresh-clone check saw it). */
  while (jitprov_rundown_completed(rc) < 1) usleep(10000);
  jitprov_rundown_result r;
  check("run_now b", jitprov_rundown_run_now(rb, JITPROV_RUNDOWN_LOCKFREE, &r));
  check("run_now c", jitprov_rundown_run_now(rc, JITPROV_RUNDOWN_LOCKFREE, &r));
  char text[64];
  snprintf(text, sizeof text, "%u %u %u\n", ia, ib, jitprov_runtime_instance(c));
  jitprov_rundown_destroy(rb);
  jitprov_rundown_destroy(rc);
  jitprov_runtime_destroy(b);
  jitprov_runtime_destroy(c);
  touch(dir, "done", text);
  return 0;
}
