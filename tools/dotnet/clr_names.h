/* SPDX-License-Identifier: MIT */
// CoreCLR's method signature text, as its MethodLoadVerbose events and its rundown carry
// it (the "legacy" pretty printer of the runtime's method events: "instance void
// (int32,class System.String)", the return type, two spaces, the parameters), made from
// a method's metadata signature blob. The attached client names the code it finds
// already JIT'd with it (docs/dotnet.md, "Attach"): the names must be CoreCLR's own, as
// the cross-check with CoreCLR's rundown compares them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace jitprov::dotnet {

struct SigNames {
  // A TypeDef or TypeRef token's name, "Namespace.Name" (or "Name" for a nested type).
  std::function<std::string(uint32_t token)> type_name;
  // A TypeSpec token's signature blob; false when unknown.
  std::function<bool(uint32_t token, const uint8_t** sig, size_t* len)> type_spec;
};

// false when the blob does not parse (out then holds what did).
bool formatMethodSig(const uint8_t* sig, size_t len, const SigNames& names, std::string* out);

}  // namespace jitprov::dotnet
