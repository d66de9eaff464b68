/* SPDX-License-Identifier: MIT */
/* jitprov.h compiled as C11 (-std=c11 -pedantic -Werror in tests/meson.build): the
 * header is usable from C, with the INIT macros. */
#include <jitprov/jitprov.h>

int jitprov_c11_smoke(void);

int jitprov_c11_smoke(void) {
  jitprov_runtime_config cfg = JITPROV_RUNTIME_CONFIG_INIT;
  jitprov_method_desc d = JITPROV_METHOD_DESC_INIT;
  jitprov_code_desc c = JITPROV_CODE_DESC_INIT;
  jitprov_runtime* rt = NULL;
  uint64_t mod = 0;
  uint64_t m = 0, v = 0;
  int e;
  cfg.code_mode = JITPROV_CODE_HOST;
  if ((e = jitprov_runtime_create(&cfg, &rt)) != JITPROV_OK) return e;
  if ((e = jitprov_module_register(rt, "c11", 0, &mod)) == JITPROV_OK) {
    d.name = "f";
    d.host_key = 11;
    if ((e = jitprov_method_register(rt, mod, &d, &m)) == JITPROV_OK) {
      c.code_start = 0x1000;
      c.code_size = 16;
      e = jitprov_code_publish(rt, m, &c, &v);
    }
  }
  jitprov_runtime_destroy(rt);
  return e;
}
