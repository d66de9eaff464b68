// Command-line parsing shared by the tools: CLI11, with one line on stderr and exit
// status 2 for a usage error, and --help on stdout with status 0.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdio>
#include <optional>

namespace jitprov::tools {

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
