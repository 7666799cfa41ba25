// The tools library that the kspmv tool and the benchmarks share: argument reading, JSON and CSV
// output, medians and interleaved timing, random vectors, loading a matrix.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "kspmv/core/error.hpp"
#include "kspmv/io/matrix_market.hpp"
#include "kspmv/version.hpp"
#include "tools/args.hpp"
#include "tools/common.hpp"
#include "tools/csv.hpp"
#include "tools/json.hpp"

namespace {

using namespace kspmv::tools;

std::string contents(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A benchmark: the command is the program.
Command bench_command() {
  Command c;
  c.name = "x_bench";
  c.program = "";
  c.options = {{"gen", "SPEC", "a matrix; repeatable"},
               {"precision", "P", "float or double"},
               {"quick", "", "small ones"}};
  return c;
}

TEST(ToolsArgs, RepeatableOptionKeepsEveryValueInOrder) {
  const ParsedArgs a =
      parse_args(bench_command(), {"--gen", "kron:scale=4", "--quick", "--gen=laplace2d:n=3"});
  EXPECT_EQ(a.all("gen"), (std::vector<std::string>{"kron:scale=4", "laplace2d:n=3"}));
  EXPECT_EQ(a.text("gen", ""), "laplace2d:n=3");  // the last one
  EXPECT_TRUE(a.all("precision").empty());
  EXPECT_TRUE(a.flag("quick"));
}

TEST(ToolsArgs, ChoiceAcceptsOnlyItsChoices) {
  const std::vector<std::string> choices = {"float", "double"};
  EXPECT_EQ(parse_args(bench_command(), {}).choice("precision", "double", choices), "double");
  EXPECT_EQ(
      parse_args(bench_command(), {"--precision", "float"}).choice("precision", "double", choices),
      "float");
  EXPECT_THROW(
      parse_args(bench_command(), {"--precision", "half"}).choice("precision", "double", choices),
      UsageError);
}

TEST(ToolsArgs, HelpAndErrorsNameTheProgram) {
  EXPECT_EQ(command_help(bench_command()).rfind("usage: x_bench [options]\n", 0), 0u);
  try {
    parse_args(bench_command(), {"--bogus"});
    FAIL() << "--bogus accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("(see 'x_bench --help')"), std::string::npos) << e.what();
  }
  Command tool_command = bench_command();
  tool_command.program = "kspmv";
  EXPECT_EQ(command_help(tool_command).rfind("usage: kspmv x_bench [options]\n", 0), 0u);
}

TEST(ToolsArgs, GuardedMainTellsAnErrorOnOneLineWithStatus2) {
  testing::internal::CaptureStderr();
  EXPECT_EQ(guarded_main("x_bench", []() -> int { throw UsageError("bad\nvalue"); }), 2);
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "x_bench: error: bad value\n");
  EXPECT_EQ(guarded_main("x_bench", [] { return 1; }), 1);
}

TEST(ToolsJson, RecordsAndOneResultPerLine) {
  std::ostringstream out;
  JsonWriter j(out);
  j.begin_object().field("device", "GPU \"0\"").key("results").begin_array(true);
  j.value(Record{
      {"n", 3}, {"ms", 0.5}, {"gbps", NAN}, {"ok", true}, {"same", nullptr}, {"note", "a,b"}});
  j.value(Record{{"bytes", std::size_t{4}}});
  j.end_array().end_object();
  EXPECT_EQ(out.str(),
            "{\"device\":\"GPU \\\"0\\\"\",\"results\":[\n"
            "{\"n\":3,\"ms\":0.5,\"gbps\":null,\"ok\":true,\"same\":null,\"note\":\"a,b\"},\n"
            "{\"bytes\":4}\n]}\n");
}

TEST(ToolsJson, EveryOutputStartsWithTheVersionAndCommit) {
  std::ostringstream out;
  JsonWriter j(out);
  begin_output(j).field("n", 1).end_object();
  EXPECT_EQ(out.str(), std::string("{\"kspmv_version\":\"") + kspmv::version_string +
                           "\",\"kspmv_commit\":\"" + kspmv::git_commit + "\",\"n\":1}\n");
  EXPECT_TRUE(std::regex_match(kspmv::git_commit, std::regex("[0-9a-f]{40}|unknown")));
  EXPECT_EQ(std::string(kspmv::version_string), std::to_string(KSPMV_VERSION / 10000) + "." +
                                                    std::to_string(KSPMV_VERSION / 100 % 100) +
                                                    "." + std::to_string(KSPMV_VERSION % 100));
  EXPECT_EQ(KSPMV_VERSION,
            KSPMV_VERSION_MAJOR * 10000 + KSPMV_VERSION_MINOR * 100 + KSPMV_VERSION_PATCH);
}

TEST(ToolsJson, SelectKeepsTheNamedFieldsInTheirOrder) {
  const Record r = {{"a", 1}, {"b", 2}, {"c", 3}};
  const Record s = select(r, {"c", "a"});
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].first, "c");
  EXPECT_EQ(s[1].first, "a");
  EXPECT_THROW(select(r, {"d"}), kspmv::InvalidArgument);
}

TEST(ToolsCsv, HeaderFromTheFirstRowTextQuotedMissingEmpty) {
  const std::string path = testing::TempDir() + "kspmv_tools_test.csv";
  write_csv(path, {{{"matrix", "uniform:rows=8,k=2"},
                    {"nnz", 16},
                    {"ms", 0.25},
                    {"ok", true},
                    {"equal", nullptr},
                    {"note", "say \"x\"\nthen y"}},
                   {{"matrix", "m"},
                    {"nnz", 1},
                    {"ms", INFINITY},
                    {"ok", false},
                    {"equal", false},
                    {"note", ""}}});
  EXPECT_EQ(contents(path),
            "matrix,nnz,ms,ok,equal,note\n"
            "\"uniform:rows=8,k=2\",16,0.25,1,,\"say \"\"x\"\"\nthen y\"\n"
            "m,1,,0,0,\n");
  std::remove(path.c_str());
}

TEST(ToolsResults, CsvJsonAndSummaryOfABenchmark) {
  const std::string dir = testing::TempDir() + "kspmv_tools_results";
  const std::vector<Record> rows = {{{"matrix", "a"}, {"ms", 2.0}, {"note", ""}}};
  std::vector<Record> full = rows;
  full[0].emplace_back("extra", 1);
  write_results(dir, "x_bench", {{"device", "D"}}, rows, full, {"ms", "matrix"});
  EXPECT_EQ(contents(dir + "/x_bench.csv"), "matrix,ms,note\na,2,\n");
  const std::string start = std::string("{\"kspmv_version\":\"") + kspmv::version_string +
                            "\",\"kspmv_commit\":\"" + kspmv::git_commit + "\",";
  EXPECT_EQ(contents(dir + "/x_bench.json"),
            start + "\"device\":\"D\",\"results\":[\n{\"matrix\":\"a\",\"ms\":2,\"note\":\"\"," +
                "\"extra\":1}\n]}\n");
  EXPECT_EQ(contents(dir + "/summary.json"),
            start + "\"device\":\"D\",\"results\":[\n{\"ms\":2,\"matrix\":\"a\"}\n]}\n");
  std::filesystem::remove_all(dir);
}

TEST(ToolsTiming, MedianAndInterleavedRounds) {
  EXPECT_EQ(median({3, 1, 2}), 2);
  EXPECT_EQ(median({4, 1, 2, 3}), 2.5);
  EXPECT_TRUE(std::isnan(median({})));
  // One untimed warm-up round, then three timed rounds, each body once per round, in turn.
  std::string order;
  double clock = 0;
  const std::vector<double> ms = interleaved_median_ms(
      {[&] { order += 'a'; }, [&] { order += 'b'; }}, 3, 1, [&](const Body& body) {
        body();
        return clock += 1;
      });
  EXPECT_EQ(order, "abababab");
  EXPECT_EQ(ms, (std::vector<double>{3, 4}));  // a timed 1, 3, 5; b timed 2, 4, 6
}

TEST(ToolsRandom, ValuesFollowTheSeedAndStayInRange) {
  const auto a = random_values<double>(1000, 7);
  EXPECT_EQ(a, random_values<double>(1000, 7));
  EXPECT_NE(a, random_values<double>(1000, 8));
  for (const double v : a) {
    EXPECT_GE(v, -1.0);
    EXPECT_LT(v, 1.0);
  }
}

TEST(ToolsLoad, GeneratorSpecOrFile) {
  const auto g = load_matrix<double>("gen:laplace2d:n=4", false);
  EXPECT_EQ(g.nrows, 16);
  EXPECT_EQ(g.nnz(), 64);
  const std::string path = testing::TempDir() + "kspmv_tools_test.mtx";
  kspmv::io::write_matrix_market(path, g);
  const auto f = load_matrix<double>(path, false);
  EXPECT_EQ(f.nrows, g.nrows);
  EXPECT_EQ(f.nnz(), g.nnz());
  std::remove(path.c_str());
  EXPECT_THROW(load_matrix<double>("gen:nosuch:n=3", false), kspmv::InvalidArgument);
}

TEST(ToolsDate, Iso8601Utc) {
  EXPECT_TRUE(std::regex_match(utc_date(), std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")))
      << utc_date();
}

}  // namespace
