// SPDX-License-Identifier: MIT
#include <jitprov/result.h>

namespace jitprov {

const char* errcMessage(Errc e) noexcept {
  switch (e) {
    case Errc::kOk:
      return "ok";
    case Errc::kUnknownModule:
      return "unknown module id";
    case Errc::kUnknownMethod:
      return "unknown method id";
    case Errc::kUnknownVersion:
      return "unknown code version id";
    case Errc::kModuleUnloaded:
      return "module is unloaded";
    case Errc::kMethodUnloaded:
      return "method is unloaded";
    case Errc::kNotCollectible:
      return "module is not collectible";
    case Errc::kAlreadyPublished:
      return "code version is already published";
    case Errc::kNotPublished:
      return "code version has no published code";
    case Errc::kZeroCodeSize:
      return "code size is zero";
    case Errc::kInvalidUtf8:
      return "name is not valid UTF-8 or contains NUL";
    case Errc::kNameTooLong:
      return "name is longer than 64 KiB";
    case Errc::kInvalidArgument:
      return "invalid argument";
    case Errc::kCapacityExhausted:
      return "a system resource (thread, file descriptor) is exhausted";
    case Errc::kCodeHeapExhausted:
      return "code heap exhausted";
    case Errc::kBusy:
      return "busy";
    case Errc::kAlreadyExists:
      return "a method with this host key is already registered";
    case Errc::kRangeOverlap:
      return "code range overlaps live code of another version";
    case Errc::kVersionGone:
      return "code version was retired or its method unloaded";
    case Errc::kWrongCodeMode:
      return "call does not match the runtime's code mode (host or model heap)";
    case Errc::kOutOfMemory:
      return "out of memory";
    case Errc::kInternal:
      return "internal error in jitprov";
    case Errc::kTooManyModules:
      return "too many modules: 1048575 live or awaiting reclamation is the registry's limit";
    case Errc::kTooManyMethods:
      return "too many methods: 67108863 live or awaiting reclamation is the registry's limit";
    case Errc::kTooManyVersions:
      return "too many native code versions: 268435455 live or awaiting reclamation is the registry's limit";
    case Errc::kCutShort:
      return "the rundown was cut short by a stop or destroy of its engine: not complete";
  }
  return "unknown error";
}

}  // namespace jitprov
