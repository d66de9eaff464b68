// SPDX-License-Identifier: MIT
// The tools' shared command-line and JSON helpers (tools/cli.h, tools/json_text.h).
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "cli.h"
#include "json_text.h"

namespace {

// Parses `args` (after the program's name) with one option `--pid` of wholeIn(1, 4194304).
std::optional<long long> pidOf(std::vector<std::string> args) {
  CLI::App app{"t"};
  long long pid = -1;
  app.add_option("--pid", pid)->check(jitprov::tools::wholeIn(1, 4194304));
  std::vector<std::string> rev(args.rbegin(), args.rend());
  try {
    app.parse(rev);
  } catch (const CLI::ParseError&) {
    return std::nullopt;
  }
  return pid;
}

TEST(ToolCli, WholeNumbersAreReadInBaseTen) {
  EXPECT_EQ(pidOf({"--pid", "755"}), 755);
  // CLI11 alone reads these in base 8 (493, 8): another process. Refused.
  EXPECT_EQ(pidOf({"--pid", "0755"}), std::nullopt);
  EXPECT_EQ(pidOf({"--pid", "010"}), std::nullopt);
  EXPECT_EQ(pidOf({"--pid", " 12"}), std::nullopt);
  EXPECT_EQ(pidOf({"--pid", "+12"}), std::nullopt);
  EXPECT_EQ(pidOf({"--pid", "0x10"}), std::nullopt);
  EXPECT_EQ(pidOf({"--pid", "12abc"}), std::nullopt);
  EXPECT_EQ(pidOf({"--pid", "0"}), std::nullopt);
  EXPECT_EQ(pidOf({"--pid", "99999999999999999999"}), std::nullopt);
}

TEST(ToolJson, TextThatIsNotUtf8IsReplacedNotThrown) {
  const nlohmann::json j = {{"command", std::string("java -jar /data/caf\xe9.jar")},
                            {"comm", std::string("\xce\xb1\xce")}};  // cut in a character
  std::string text;
  ASSERT_NO_THROW(text = jitprov::tools::jsonText(j));
  EXPECT_NE(text.find("caf\xef\xbf\xbd.jar"), std::string::npos) << text;
  EXPECT_NE(text.find("\xce\xb1\xef\xbf\xbd"), std::string::npos) << text;
  nlohmann::json back;
  EXPECT_NO_THROW(back = nlohmann::json::parse(text));
  EXPECT_EQ(back["command"], "java -jar /data/caf\xef\xbf\xbd.jar");
  EXPECT_EQ(jitprov::tools::jsonText(nlohmann::json{{"a", 1}}, 2), "{\n  \"a\": 1\n}");
}

}  // namespace
