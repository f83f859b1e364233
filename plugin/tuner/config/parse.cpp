// SPDX-License-Identifier: Apache-2.0
// The whole-file pass: split lines, strip comments, hand each line to its format, then check what
// only the whole file shows (overlapping railscope rules, measured figures given twice).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <tuple>

#include "plugin/tuner/config/line_parsers.h"

namespace railscope::tuner {

std::string ConfigError::to_string() const {
  return fmt::format("{}:{}:{}: {}", file, line, column, message);
}

namespace detail {
bool LineSink::error(int column, std::string message) const {
  errors->push_back({std::string(file), line, column, std::move(message)});
  return false;
}
void LineSink::deprecated(int column, std::string message) const {
  if (deprecations != nullptr)
    deprecations->push_back(fmt::format("{}:{}:{}: {}", file, line, column, message));
}
}  // namespace detail

namespace {

bool rules_overlap(const Rule& a, const Rule& b) {
  return (a.coll_mask & b.coll_mask) != 0 && a.bytes.overlaps(b.bytes) && a.nodes.overlaps(b.nodes) &&
         a.ranks.overlaps(b.ranks) && a.pipe_ops.overlaps(b.pipe_ops) &&
         (a.reg_buff < 0 || b.reg_buff < 0 || a.reg_buff == b.reg_buff);
}

}  // namespace

ParsedConfig parse_config_text(std::string_view text, std::string_view file_name) {
  ParsedConfig out;
  out.config.path = std::string(file_name);
  size_t pos = 0;
  int line_no = 0;
  bool rule_limit_reported = false, measured_limit_reported = false, points_limit_reported = false;
  // A calibration point given twice is ambiguous: its key, and the line that gave it first.
  std::map<std::tuple<int, int, int, uint64_t, int, int>, int> point_lines;
  while (pos <= text.size()) {
    const size_t nl = text.find('\n', pos);
    std::string_view line =
        text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() + 1 : nl + 1;
    ++line_no;
    if (const size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;

    const detail::LineSink sink{file_name, line_no, &out.errors, &out.config.deprecations};
    if (detail::is_csv_line(line)) {
      if (out.config.rules.size() >= kMaxRules) {
        if (!rule_limit_reported)
          sink.error(1, fmt::format("more than {} rules: this line and every later rule are ignored (each "
                                    "rule is compared with every earlier one for overlap)",
                                    kMaxRules));
        rule_limit_reported = true;
        continue;
      }
      detail::parse_csv_line(line, sink, out.config);
      continue;
    }
    if (out.config.points.size() >= kMaxPoints) {
      if (!points_limit_reported)
        sink.error(1,
                   fmt::format("more than {} lines: this line and every later one are ignored", kMaxPoints));
      points_limit_reported = true;
      continue;
    }
    const size_t rules_before = out.config.rules.size();
    const size_t measured_before = out.config.measured.size();
    int range_col = 1;
    if (!detail::parse_railscope_line(line, sink, out.config, range_col)) continue;
    if (out.config.measured.size() > kMaxMeasured) {
      out.config.measured.resize(measured_before);
      if (!measured_limit_reported)
        sink.error(1, fmt::format("more than {} measured entries: this line and every later measure line "
                                  "are ignored (each entry is compared with every other)",
                                  kMaxMeasured));
      measured_limit_reported = true;
      continue;
    }
    if (!out.config.points.empty() && out.config.points.back().line == line_no) {
      const CalibrationPoint& pt = out.config.points.back();
      const auto [it, added] =
          point_lines.try_emplace({pt.coll, pt.algo, pt.proto, pt.bytes, pt.ranks, pt.nodes}, line_no);
      if (!added) {
        sink.error(1, fmt::format("point {} {} B {}/{} ranks={} nodes={} already given at line {}",
                                  coll_name(pt.coll), pt.bytes, algo_name(pt.algo), proto_name(pt.proto),
                                  pt.ranks, pt.nodes, it->second));
        out.config.points.pop_back();
      }
      continue;
    }
    if (out.config.rules.size() == rules_before) continue;  // not a rule
    if (out.config.rules.size() > kMaxRules) {
      out.config.rules.pop_back();
      if (!rule_limit_reported)
        sink.error(1, fmt::format("more than {} rules: this line and every later rule are ignored (each rule "
                                  "is compared with every earlier one for overlap)",
                                  kMaxRules));
      rule_limit_reported = true;
      continue;
    }
    // Railscope rules must not overlap (NCCL CSV rules keep NCCL's first-match order instead).
    const Rule& added = out.config.rules.back();
    for (size_t i = 0; i + 1 < out.config.rules.size(); ++i) {
      const Rule& earlier = out.config.rules[i];
      if (earlier.format != RuleFormat::Railscope || !rules_overlap(earlier, added)) continue;
      sink.error(range_col, fmt::format("rule overlaps the rule at line {} (same collective and intersecting "
                                        "bytes/nodes/ranks/pipeops/regbuff ranges)",
                                        earlier.line));
      out.config.rules.pop_back();
      break;
    }
  }
  // A measured entry given twice is ambiguous.
  for (size_t i = 0; i < out.config.measured.size(); ++i)
    for (size_t j = 0; j < i; ++j) {
      const MeasuredFigure& a = out.config.measured[i].figure;
      const MeasuredFigure& b = out.config.measured[j].figure;
      if (a.coll == b.coll && a.algo == b.algo && a.proto == b.proto && a.nodes == b.nodes) {
        out.errors.push_back(
            {std::string(file_name), out.config.measured[i].line, 1,
             fmt::format("measure {} {} {} nodes={} already given at line {}", coll_name(a.coll),
                         algo_name(a.algo), proto_name(a.proto), a.nodes, out.config.measured[j].line)});
        out.config.measured.erase(out.config.measured.begin() + static_cast<std::ptrdiff_t>(i));
        --i;
        break;
      }
    }
  // A file of thousands of bad lines: the first ones, then how many more.
  if (out.errors.size() > kMaxErrorsListed) {
    const size_t more = out.errors.size() - kMaxErrorsListed;
    out.errors.resize(kMaxErrorsListed + 1);
    ConfigError& last = out.errors.back();
    last.column = 1;
    last.message = fmt::format("and {} more errors from this line on (only the first {} are listed)", more,
                               kMaxErrorsListed);
  }
  return out;
}

namespace {

// The file's text, or why not. Only a regular file is opened (a device such as /dev/zero would never
// end, a FIFO would block), and no more than kMaxConfigBytes are read.
std::optional<std::string> read_config(const std::string& path, std::string& why) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    why = "cannot open the tuner config file";
    return std::nullopt;
  }
  if (!S_ISREG(st.st_mode)) {
    why = "the tuner config is not a regular file (a device, a pipe or a directory); give a file";
    return std::nullopt;
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    why = "cannot open the tuner config file";
    return std::nullopt;
  }
  std::string text;
  char buf[65536];
  int read_errno = 0;
  while (text.size() <= kMaxConfigBytes) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) read_errno = errno;
    if (n <= 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  if (read_errno != 0) {
    why = fmt::format("cannot read the tuner config file: {}", std::strerror(read_errno));
    return std::nullopt;
  }
  if (text.size() > kMaxConfigBytes) {
    why = fmt::format("the tuner config file is larger than {} bytes (1 MiB), the limit", kMaxConfigBytes);
    return std::nullopt;
  }
  return text;
}

}  // namespace

ParsedConfig load_config_file(const std::string& path) {
  std::string why;
  const std::optional<std::string> text = read_config(path, why);
  if (!text) {
    ParsedConfig out;
    out.config.path = path;
    out.errors.push_back({path, 0, 0, why});
    return out;
  }
  return parse_config_text(*text, path);
}

std::vector<MeasuredFigure> measured_figures(const Config& config) {
  std::vector<MeasuredFigure> out;
  out.reserve(config.measured.size());
  for (const MeasuredEntry& m : config.measured) out.push_back(m.figure);
  return out;
}

}  // namespace railscope::tuner
