/* SPDX-License-Identifier: MIT */
// Splitting a separated list ("locked,lockfree", "session,every:30"). Part of the
// common library.
#pragma once

#include <string_view>
#include <vector>

namespace jitprov {

// The pieces of `list` between the separators, empty ones included: "a,,b" gives "a",
// "", "b"; "" gives one empty piece. The views point into `list`.
std::vector<std::string_view> splitList(std::string_view list, char separator = ',');

}  // namespace jitprov
