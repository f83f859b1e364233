// SPDX-License-Identifier: Apache-2.0
// Messages from another rank (and netbench's output) whose fields have another JSON type than the one
// expected: refused, never an exception. nlohmann's json::value(key, default) throws type_error on them,
// and nothing in `railscope preflight` catches it, so rank 0 would end on one peer's message.
#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "json_fields.h"
#include "link_plan.h"
#include "verdict.h"

namespace railscope::preflight {
namespace {

using nlohmann::json;

const json kOtherTypes[] = {json(1), json(nullptr), json::object(), json::array({"x/1"}), json(true)};

TEST(PeerJson, ASchemaOfAnotherTypeIsNoSchema) {
  EXPECT_TRUE(has_schema(json{{"schema", "x/1"}}, "x/1"));
  EXPECT_FALSE(has_schema(json{{"schema", "x/2"}}, "x/1"));
  for (const json& other : kOtherTypes) EXPECT_FALSE(has_schema(json{{"schema", other}}, "x/1")) << other;
  EXPECT_FALSE(has_schema(json::array({"schema", "x/1"}), "x/1"));
  EXPECT_FALSE(has_schema(json("x/1"), "x/1"));
  EXPECT_FALSE(has_schema(json::object(), "x/1"));
}

TEST(PeerJson, FiniteNumberOrZero) {
  json row = {{"GBps", 12.5}, {"n", 3}, {"text", "12"}, {"null", nullptr}, {"list", json::array({1})}};
  row["inf"] = std::numeric_limits<double>::infinity();
  row["nan"] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(finite_number(row, "GBps"), 12.5);
  EXPECT_EQ(finite_number(row, "n"), 3.0);
  for (const char* key : {"text", "null", "list", "inf", "nan", "missing"})
    EXPECT_EQ(finite_number(row, key), 0.0) << key;
  EXPECT_EQ(finite_number(json::array({12.5}), "GBps"), 0.0);
}

TEST(PeerJson, StepResultsAndVerdictWithASchemaOfAnotherTypeAreRefused) {
  std::string e;
  const std::vector<LinkTask> tasks{{3, 0, true, "rxe0", 1, "eth0", "10.0.0.1", 29557, Measure::Bandwidth}};
  const std::vector<TaskResult> results{{0, true, 12.5, 0, "", std::nullopt}};
  // As it arrives: parsed from the text rank 0 sent (counts read back as unsigned).
  const json verdict = json::parse(rank_verdict(decide(1, "slurm", {}, {}, {}, 60), 1).dump());
  std::string line;
  int code = -1;
  // The healthy twins: the same messages as sent.
  ASSERT_TRUE(tasks_from_json(tasks_to_json(3, tasks), 3, &e)) << e;
  ASSERT_TRUE(results_from_json(results_to_json(3, results), 3, 1, &e)) << e;
  ASSERT_TRUE(rank_summary(verdict, 1, "hostA", &line, &code)) << verdict;
  for (const json& other : kOtherTypes) {
    json step = tasks_to_json(3, tasks);
    step["schema"] = other;
    EXPECT_FALSE(tasks_from_json(step, 3, &e)) << other;
    EXPECT_EQ(e, "not a step");
    json answer = results_to_json(3, results);
    answer["schema"] = other;
    EXPECT_FALSE(results_from_json(answer, 3, 1, &e)) << other;
    EXPECT_EQ(e, "not step results");
    json v = verdict;
    v["schema"] = other;
    EXPECT_FALSE(rank_summary(v, 1, "hostA", &line, &code)) << other;
  }
}

}  // namespace
}  // namespace railscope::preflight
