// SPDX-License-Identifier: MIT
#include "clr_names.h"

namespace jitprov::dotnet {
namespace {

// ECMA-335 II.23.1.16 element types used in signatures.
enum : uint8_t {
  kEtVoid = 0x01,
  kEtBoolean,
  kEtChar,
  kEtI1,
  kEtU1,
  kEtI2,
  kEtU2,
  kEtI4,
  kEtU4,
  kEtI8,
  kEtU8,
  kEtR4,
  kEtR8,
  kEtString,
  kEtPtr,
  kEtByRef,
  kEtValueType,
  kEtClass,
  kEtVar,
  kEtArray,
  kEtGenericInst,
  kEtTypedByRef,
  kEtI = 0x18,
  kEtU = 0x19,
  kEtFnPtr = 0x1B,
  kEtObject = 0x1C,
  kEtSzArray = 0x1D,
  kEtMVar = 0x1E,
  kEtCModReqd = 0x1F,
  kEtCModOpt = 0x20,
  kEtSentinel = 0x41,
  kEtPinned = 0x45,
};

class Printer {
 public:
  Printer(const uint8_t* p, size_t len, const SigNames& names, int depth = 0)
      : p_(p), end_(p + len), names_(names), depth_(depth) {}

  // A method signature: [instance ][generic ]CALLCONV RET  (ARGS).
  bool method(std::string* out) {
    uint32_t cc = 0;
    if (!data(&cc)) return false;
    if ((cc & 0x0F) == 0x06) {  // a field's signature
      return type(out);
    }
    if (!convention(cc, out)) return false;
    uint32_t args = 0;
    if (!data(&args) || !type(out)) return false;
    *out += "  (";  // CoreCLR names the method " ": the return type, a space, " ", "("
    return params(args, out);
  }

 private:
  // What a method signature's calling convention byte CC says before its return type:
  // "instance ", "generic " (its generic parameter count read and dropped) and the
  // convention's own word, as CoreCLR writes them.
  bool convention(uint32_t cc, std::string* out) {
    if (cc & 0x20) *out += "instance ";
    if (cc & 0x10) {
      *out += "generic ";
      uint32_t n = 0;
      if (!data(&n)) return false;
    }
    static const char* const kConv[12] = {"",
                                          "unmanaged cdecl ",
                                          "unmanaged stdcall ",
                                          "unmanaged thiscall ",
                                          "unmanaged fastcall ",
                                          "vararg ",
                                          "<error> ",
                                          "<error> ",
                                          "",
                                          "",
                                          "",
                                          "native vararg "};
    if ((cc & 0x0F) < 12) *out += kConv[cc & 0x0F];
    return true;
  }

  bool params(uint32_t args, std::string* out) {
    bool comma = false;
    while (args != 0 && p_ < end_) {
      if (comma) *out += ",";
      if (*p_ == kEtSentinel) {
        *out += "...";
        ++p_;
      } else {
        if (!type(out)) return false;
        --args;
      }
      comma = true;
    }
    *out += ")";
    return args == 0;  // a blob cut between two parameters does not parse
  }

  bool data(uint32_t* v) {
    if (p_ >= end_) return false;
    const uint8_t b = *p_;
    if ((b & 0x80) == 0) {
      *v = b;
      p_ += 1;
    } else if ((b & 0xC0) == 0x80) {
      if (end_ - p_ < 2) return false;
      *v = uint32_t(b & 0x3F) << 8 | p_[1];
      p_ += 2;
    } else if ((b & 0xE0) == 0xC0) {
      if (end_ - p_ < 4) return false;
      *v = uint32_t(b & 0x1F) << 24 | uint32_t(p_[1]) << 16 | uint32_t(p_[2]) << 8 | p_[3];
      p_ += 4;
    } else {
      return false;
    }
    return true;
  }

  bool token(uint32_t* tk) {
    uint32_t v = 0;
    if (!data(&v)) return false;
    static const uint32_t kTables[4] = {0x02000000, 0x01000000, 0x1B000000, 0x72000000};
    *tk = kTables[v & 3] | (v >> 2);
    return true;
  }

  // A class token: TypeDef or TypeRef by name, TypeSpec by its own signature.
  bool klass(std::string* out) {
    uint32_t tk = 0;
    if (!token(&tk)) return false;
    if ((tk & 0xFF000000) == 0x1B000000) {
      const uint8_t* sig = nullptr;
      size_t len = 0;
      if (depth_ > 32 || !names_.type_spec || !names_.type_spec(tk, &sig, &len)) return false;
      Printer sub(sig, len, names_, depth_ + 1);
      return sub.type(out);
    }
    *out += names_.type_name ? names_.type_name(tk) : "<UNKNOWN>";
    return true;
  }

  bool type(std::string* out) {
    if (p_ >= end_ || ++depth_ > 64) return false;
    const uint8_t et = *p_++;
    bool ok = true;
    switch (et) {
      case kEtVoid:
        *out += "void";
        break;
      case kEtBoolean:
        *out += "bool";
        break;
      case kEtChar:
        *out += "wchar";
        break;
      case kEtI1:
        *out += "int8";
        break;
      case kEtU1:
        *out += "unsigned int8";
        break;
      case kEtI2:
        *out += "int16";
        break;
      case kEtU2:
        *out += "unsigned int16";
        break;
      case kEtI4:
        *out += "int32";
        break;
      case kEtU4:
        *out += "unsigned int32";
        break;
      case kEtI8:
        *out += "int64";
        break;
      case kEtU8:
        *out += "unsigned int64";
        break;
      case kEtR4:
        *out += "float32";
        break;
      case kEtR8:
        *out += "float64";
        break;
      case kEtU:
        *out += "unsigned int";
        break;
      case kEtI:
        *out += "int";
        break;
      case kEtObject:
        *out += "class System.Object";
        break;
      case kEtString:
        *out += "class System.String";
        break;
      case kEtTypedByRef:
        *out += "refany";
        break;
      case kEtValueType:
        *out += "value class ";
        ok = klass(out);
        break;
      case kEtClass:
        *out += "class ";
        ok = klass(out);
        break;
      case kEtCModReqd:
      case kEtCModOpt:
        *out += et == kEtCModReqd ? "required_modifier " : "optional_modifier ";
        ok = klass(out);
        *out += " ";
        ok = ok && type(out);
        break;
      case kEtSzArray:
        ok = type(out);
        *out += "[]";
        break;
      case kEtArray: {
        ok = type(out);
        uint32_t rank = 0, nsizes = 0, nbounds = 0;
        if (!ok || !data(&rank)) return false;
        if (rank == 0) {
          *out += "[??]";
          break;
        }
        if (rank > 64) return false;
        uint32_t sizes[64] = {}, bounds[64] = {};
        if (!data(&nsizes) || nsizes > rank) return false;
        for (uint32_t i = 0; i < nsizes; ++i)
          if (!data(&sizes[i])) return false;
        if (!data(&nbounds) || nbounds > rank) return false;
        for (uint32_t i = 0; i < nbounds; ++i)
          if (!data(&bounds[i])) return false;  // signed in the blob; CoreCLR prints it so too
        *out += "[";
        for (uint32_t i = 0; i < rank; ++i) {
          if (sizes[i] != 0 && bounds[i] != 0)
            *out += std::to_string(int(bounds[i])) + "..." + std::to_string(int(bounds[i] + sizes[i] + 1));
          if (i + 1 < rank) *out += ",";
        }
        *out += "]";
        break;
      }
      case kEtMVar:
      case kEtVar: {
        uint32_t n = 0;
        if (!data(&n)) return false;
        *out += (et == kEtMVar ? "!!" : "!") + std::to_string(n);
        break;
      }
      case kEtGenericInst: {
        uint32_t n = 0;
        if (!type(out) || !data(&n)) return false;
        *out += "<";
        for (uint32_t i = 0; i < n && ok; ++i) {
          if (i > 0) *out += ",";
          ok = type(out);
        }
        *out += ">";
        break;
      }
      case kEtFnPtr: {
        *out += "fnptr ";
        // A method signature named "": no space before its parameters.
        uint32_t cc = 0, args = 0;
        if (!data(&cc)) return false;
        if (!convention(cc, out)) return false;
        if (!data(&args) || !type(out)) return false;
        *out += "(";
        ok = params(args, out);
        break;
      }
      case kEtPinned:
      case kEtPtr:
      case kEtByRef:
        ok = type(out);
        *out += et == kEtPinned ? " pinned" : et == kEtPtr ? "*" : "&";
        break;
      default:
        return false;
    }
    --depth_;
    return ok;
  }

  const uint8_t* p_;
  const uint8_t* end_;
  const SigNames& names_;
  int depth_;
};

}  // namespace

bool formatMethodSig(const uint8_t* sig, size_t len, const SigNames& names, std::string* out) {
  out->clear();
  Printer p(sig, len, names);
  return p.method(out);
}

}  // namespace jitprov::dotnet
