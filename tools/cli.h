/* SPDX-License-Identifier: MIT */
// Command-line parsing shared by the tools: CLI11, with one line on stderr and exit
// status 2 for a usage error, and --help on stdout with status 0.
#pragma once

#include <CLI/CLI.hpp>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

namespace jitprov::tools {

// For uint64_t options: CLI11 reads them with strtoull, which wraps "-3" to 2^64 - 3
// and takes 2^64 and beyond as 2^64 - 1 (ERANGE unchecked). Refuses both; accepts what
// CLI11 then parses (decimal, 0x hexadecimal, 0 octal).
inline CLI::Validator uint64Whole() {
  return CLI::Validator(
      [](std::string& v) -> std::string {
        const size_t i = v.find_first_not_of(" \t");
        if (i != std::string::npos && v[i] == '-') return "'" + v + "' is negative";
        char* end = nullptr;
        errno = 0;
        std::strtoull(v.c_str(), &end, 0);
        if (errno == ERANGE) return "'" + v + "' is more than 18446744073709551615 (2^64 - 1)";
        if (end == v.c_str() || *end != '\0') return "'" + v + "' is not a whole number";
        return {};
      },
      "UINT");
}

// A finite number from 0 to max (CLI11's own ranges print DBL_MAX in 309 digits).
inline CLI::Validator finiteIn(double max) {
  return CLI::Validator(
      [max](std::string& s) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(s.c_str(), &end);
        if (end == s.c_str() || *end != '\0' || !std::isfinite(v) || v < 0 || v > max)
          return "'" + s + "' is not a number from 0 to " + CLI::detail::to_string(max);
        return {};
      },
      "FINITE");
}

// A finite number above 0 and at most max.
inline CLI::Validator positiveUpTo(double max) {
  return CLI::Validator(
      [max](std::string& s) -> std::string {
        char* end = nullptr;
        const double v = std::strtod(s.c_str(), &end);
        if (end == s.c_str() || *end != '\0' || !std::isfinite(v) || v <= 0 || v > max)
          return "'" + s + "' is not a number above 0 and at most " + CLI::detail::to_string(max);
        return {};
      },
      "FINITE");
}

// A whole number from lo to hi.
inline CLI::Validator wholeIn(long long lo, long long hi) {
  return CLI::Validator(
      [lo, hi](std::string& s) -> std::string {
        // Digits only (after a '-'), no leading zero: CLI11 converts the value itself
        // afterwards in base 0 (a validator sees a copy), so that "0755" would be 493.
        const size_t first = !s.empty() && s[0] == '-' ? 1 : 0;
        const bool digits = s.size() > first && (s[first] != '0' || s.size() == first + 1) &&
                            std::all_of(s.begin() + long(first), s.end(), [](char c) { return c >= '0' && c <= '9'; });
        errno = 0;
        const long long v = digits ? std::strtoll(s.c_str(), nullptr, 10) : 0;
        if (!digits || errno != 0 || v < lo || v > hi)
          return "'" + s + "' is not a whole number from " + std::to_string(lo) + " to " + std::to_string(hi);
        return {};
      },
      "INT");
}

// Parses argv. Returns the exit status to return from main() when the program must
// stop here (help shown: 0; usage error: 2), or nothing to carry on.
inline std::optional<int> parseArgs(CLI::App& cli, const char* tool, int argc, char** argv) {
  try {
    cli.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return cli.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "%s: %s (see --help)\n", tool, e.what());
    return 2;
  }
  return std::nullopt;
}

}  // namespace jitprov::tools
