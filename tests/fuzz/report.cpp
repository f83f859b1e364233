// SPDX-License-Identifier: Apache-2.0
// Fuzzes `railscope report` past its command line: the profile reader (tools/report/profile_reader.h,
// docs/profile-format.md), the analysis, and the three renderers (render.h). Profiles are files any
// rank wrote, possibly cut short by a crash, or not railscope's at all.
//
// Input: the run's profile file; after a form feed (\f), the baseline's; after a second form feed, a name
// for the run's file (any bytes, UTF-8 or not; '/' and NUL become '_'). Each profile is handed to
// read_profiles() as a file (an in-memory file: memfd_create, so no profile is written to disk); a
// named run file is read through a folder holding only a link of that name (plus ".jsonl") to it, as
// the CLI reads a folder. The report is built as the CLI builds it (tools/report/report_command.cpp).
// Properties: no crash, exception or undefined behaviour on any bytes; the JSON output parses (so is
// UTF-8 whatever the file's name), is a railscope.report object, and counts the records the analysis
// counted.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "tests/fuzz/fuzz_check.h"
#include "tools/report/analysis.h"
#include "tools/report/profile_reader.h"
#include "tools/report/render.h"

namespace rr = railscope::report;

namespace {

// One in-memory file per role, reused by every input of the process.
class MemFile {
 public:
  explicit MemFile(const char* name) : fd_(memfd_create(name, 0)) {
    RS_FUZZ_CHECK(fd_ >= 0, "memfd_create failed");
    path_ = "/proc/self/fd/" + std::to_string(fd_);
  }
  const std::string& write(std::string_view bytes) {
    RS_FUZZ_CHECK(ftruncate(fd_, 0) == 0, "ftruncate failed");
    size_t done = 0;
    while (done < bytes.size()) {
      const ssize_t n = pwrite(fd_, bytes.data() + done, bytes.size() - done, static_cast<off_t>(done));
      RS_FUZZ_CHECK(n > 0, "pwrite failed");
      done += static_cast<size_t>(n);
    }
    return path_;
  }

 private:
  int fd_;
  std::string path_;
};

// A folder that holds one link, named from the input, to the run's in-memory file.
class NamedLink {
 public:
  NamedLink() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "railscope-fuzz-report-XXXXXX").string();
    RS_FUZZ_CHECK(mkdtemp(tmpl.data()) != nullptr, "mkdtemp failed");
    dir_ = tmpl;
  }
  ~NamedLink() { std::filesystem::remove_all(dir_); }
  // The folder, now holding only `name`.jsonl -> target.
  const std::string& point(std::string_view name, const std::string& target) {
    std::string file(name.substr(0, 200));
    for (char& c : file)
      if (c == '/' || c == '\0') c = '_';
    std::error_code ec;
    if (!link_.empty()) std::filesystem::remove(link_, ec);
    link_ = dir_ + "/" + file + ".jsonl";
    RS_FUZZ_CHECK(symlink(target.c_str(), link_.c_str()) == 0, "symlink failed");
    return dir_;
  }

 private:
  std::string dir_;
  std::string link_;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static MemFile run_file("run.jsonl"), baseline_file("baseline.jsonl");
  static NamedLink named;
  const std::string_view all(reinterpret_cast<const char*>(data), size);
  const size_t ff = all.find('\f');
  const bool has_baseline = ff != std::string_view::npos;
  const size_t ff2 = has_baseline ? all.find('\f', ff + 1) : std::string_view::npos;
  const bool has_name = ff2 != std::string_view::npos;

  const std::string& run_path = run_file.write(all.substr(0, ff));
  const rr::ProfileSet run =
      rr::read_profiles({has_name ? named.point(all.substr(ff2 + 1), run_path) : run_path});
  rr::ProfileSet baseline;
  if (has_baseline) baseline = rr::read_profiles({baseline_file.write(all.substr(ff + 1, ff2 - ff - 1))});
  if (run.colls.empty() && run.diags.empty()) return 0;  // the CLI stops here with exit code 2

  const rr::Report r = rr::analyse(run, has_baseline ? &baseline : nullptr);
  (void)rr::render_text(r);
  (void)rr::render_html(r);
  const std::string json_text = rr::render_json(r);
  const nlohmann::json j = nlohmann::json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  RS_FUZZ_CHECK(!j.is_discarded() && j.is_object(), "render_json wrote something that is not JSON:\n%s",
                json_text.c_str());
  RS_FUZZ_CHECK(j.value("schema", "") == "railscope.report", "schema missing");
  RS_FUZZ_CHECK(j.value("records", uint64_t{0}) == r.records, "records %llu, analysis counted %zu",
                static_cast<unsigned long long>(j.value("records", uint64_t{0})), r.records);
  return 0;
}
