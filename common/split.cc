// SPDX-License-Identifier: MIT
#include <jitprov/split.h>

namespace jitprov {

std::vector<std::string_view> splitList(std::string_view list, char separator) {
  std::vector<std::string_view> pieces;
  for (size_t pos = 0;;) {
    const size_t end = list.find(separator, pos);
    if (end == std::string_view::npos) {
      pieces.push_back(list.substr(pos));
      return pieces;
    }
    pieces.push_back(list.substr(pos, end - pos));
    pos = end + 1;
  }
}

}  // namespace jitprov
