/* SPDX-License-Identifier: MIT */
// UTF-8 validation (for registration) and sanitisation (for trace output).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace jitprov {

// True when `s` is well-formed UTF-8 (no overlong forms, no surrogates, nothing above
// U+10FFFF) and contains no NUL byte.
bool isValidUtf8(std::string_view s) noexcept;

// Copies `s` into `out`, replacing each ill-formed sequence and NUL with U+FFFD, and
// truncating on a character boundary so that the result has at most max_bytes bytes.
// Returns true when the output differs from the input.
bool sanitizeUtf8(std::string_view s, size_t max_bytes, std::string* out);

}  // namespace jitprov
