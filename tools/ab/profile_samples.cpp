#include "profile_samples.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <system_error>

namespace railscope::ab {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The record fields this reader depends on (kept in one place so they follow docs/profile-format.md).
constexpr const char* kType = "type";
constexpr const char* kOp = "op";
constexpr const char* kBytes = "bytes";
constexpr const char* kBusBw = "busbw_gbs";
constexpr const char* kComplete = "complete";
constexpr const char* kTime = "time_us";

bool is_op_record(const json& rec) {
  if (!rec.is_object()) return false;
  auto it = rec.find(kType);
  return it != rec.end() && it->is_string() && (*it == "coll" || *it == "p2p");
}

// A record without a measured duration: only the enqueue-time stop was seen (`time_us`/`busbw_gbs`
// null), nranks unknown, or flushed before completion (`complete: false`).
bool is_untimed(const json& rec) {
  auto busbw = rec.find(kBusBw);
  auto time = rec.find(kTime);
  auto complete = rec.find(kComplete);
  return busbw == rec.end() || busbw->is_null() || time == rec.end() || time->is_null() ||
         (complete != rec.end() && complete->is_boolean() && !complete->get<bool>());
}

// Returns an empty string when the record is a valid op record, else what is wrong with it.
std::string parse_op_record(const json& rec, OpSample& out) {
  auto op = rec.find(kOp);
  auto bytes = rec.find(kBytes);
  auto busbw = rec.find(kBusBw);
  auto time = rec.find(kTime);
  if (op == rec.end() || !op->is_string() || op->get_ref<const std::string&>().empty())
    return fmt::format("field '{}' missing or not a non-empty string", kOp);
  if (bytes == rec.end() || !bytes->is_number_unsigned())
    return fmt::format("field '{}' missing or not an unsigned integer", kBytes);
  if (busbw == rec.end() || !busbw->is_number() || busbw->get<double>() < 0)
    return fmt::format("field '{}' missing or not a number >= 0", kBusBw);
  if (time == rec.end() || !time->is_number() || time->get<double>() < 0)
    return fmt::format("field '{}' missing or not a number >= 0", kTime);
  out = OpSample{op->get<std::string>(), bytes->get<std::uint64_t>(), busbw->get<double>(),
                 time->get<double>()};
  return {};
}

}  // namespace

ProfileRead read_profile_samples(const fs::path& dir) {
  ProfileRead result;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    result.error = fmt::format("profile folder {} does not exist or is not a folder", dir.string());
    return result;
  }
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_regular_file() && entry.path().extension() == ".jsonl") files.push_back(entry.path());
  }
  if (ec) {
    result.error = fmt::format("cannot list {}: {}", dir.string(), ec.message());
    return result;
  }
  std::sort(files.begin(), files.end());
  for (const auto& file : files) {
    std::ifstream in(file);
    if (!in) {
      result.error = fmt::format("cannot open {}", file.string());
      return result;
    }
    ++result.files;
    std::string line;
    std::size_t line_no = 0;
    while (std::getline(in, line)) {
      ++line_no;
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      json rec = json::parse(line, nullptr, /*allow_exceptions=*/false);
      if (rec.is_discarded()) {
        // A writer killed mid-line leaves a torn last line: tolerate only that one.
        if (in.peek() == std::char_traits<char>::eof()) {
          ++result.skipped_lines;
          continue;
        }
        result.error = fmt::format("{}:{}: not valid JSON", file.string(), line_no);
        return result;
      }
      if (!is_op_record(rec)) {
        ++result.skipped_lines;
        continue;
      }
      if (is_untimed(rec)) {
        ++result.untimed;
        continue;
      }
      OpSample sample;
      if (auto why = parse_op_record(rec, sample); !why.empty()) {
        result.error = fmt::format("{}:{}: op record: {}", file.string(), line_no, why);
        return result;
      }
      result.samples.push_back(std::move(sample));
    }
  }
  return result;
}

}  // namespace railscope::ab
