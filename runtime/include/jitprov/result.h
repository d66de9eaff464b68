/* SPDX-License-Identifier: MIT */
// Result<T>: how libjitprov reports API misuse and failures to its host.
//
// Library code never throws into, or aborts, the host runtime. Every fallible call
// returns a Result that is [[nodiscard]]: the caller must look at it.
#pragma once

#include <cstdint>
#include <utility>

namespace jitprov {

enum class Errc : uint8_t {
  kOk = 0,
  kUnknownModule,
  kUnknownMethod,
  kUnknownVersion,
  kModuleUnloaded,
  kMethodUnloaded,
  kNotCollectible,
  kAlreadyPublished,
  kNotPublished,
  kZeroCodeSize,
  kInvalidUtf8,
  kNameTooLong,
  kInvalidArgument,
  kCapacityExhausted,
  kCodeHeapExhausted,
  kBusy,
  // Appended (the values are the C API's error numbers: never renumber).
  kAlreadyExists,  // a method with this host key is registered already
  kRangeOverlap,   // the code range overlaps a live one of another version
  kVersionGone,    // the version was retired, or its method unloaded
  kWrongCodeMode,  // host-mode call on a model-heap runtime, or the reverse
  kOutOfMemory,
  kInternal,         // a bug in jitprov: an exception reached the C boundary
  kTooManyModules,   // the module table is full of live (or not yet reclaimed) modules
  kTooManyMethods,   // the method table is full of live (or not yet reclaimed) methods
  kTooManyVersions,  // the version table is full of live (or not yet reclaimed) versions
  kCutShort,         // a rundown stop() or the engine's destruction ended early: not complete
};
inline constexpr int kErrcCount = static_cast<int>(Errc::kCutShort) + 1;

// A stable, human-readable sentence fragment for an error code.
const char* errcMessage(Errc e) noexcept;

template <class T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)), errc_(Errc::kOk) {}  // NOLINT: implicit by design
  Result(Errc e) : value_(), errc_(e) {}                           // NOLINT: implicit by design

  bool ok() const noexcept { return errc_ == Errc::kOk; }
  explicit operator bool() const noexcept { return ok(); }
  Errc error() const noexcept { return errc_; }
  const char* message() const noexcept { return errcMessage(errc_); }
  // Precondition: ok(). Reading the value of a failed result returns a default T.
  const T& value() const noexcept { return value_; }
  const T& operator*() const noexcept { return value_; }
  const T* operator->() const noexcept { return &value_; }

 private:
  T value_;
  Errc errc_;
};

template <>
class [[nodiscard]] Result<void> {
 public:
  Result() : errc_(Errc::kOk) {}
  Result(Errc e) : errc_(e) {}  // NOLINT: implicit by design
  bool ok() const noexcept { return errc_ == Errc::kOk; }
  explicit operator bool() const noexcept { return ok(); }
  Errc error() const noexcept { return errc_; }
  const char* message() const noexcept { return errcMessage(errc_); }

 private:
  Errc errc_;
};

}  // namespace jitprov
