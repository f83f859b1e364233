// SPDX-License-Identifier: Apache-2.0
#include "plugin_loader.h"

#include <cstdio>

namespace railscope::abi_test {

std::string built_plugin_path(PluginKind kind) {
  switch (kind) {
    case PluginKind::Net: return RAILSCOPE_NET_PLUGIN_PATH;
    case PluginKind::Tuner: return RAILSCOPE_TUNER_PLUGIN_PATH;
    case PluginKind::Profiler: return RAILSCOPE_PROFILER_PLUGIN_PATH;
  }
  return {};
}

namespace {
std::mutex g_log_mutex;
std::vector<CapturedLog::Line>& log_lines() {
  static std::vector<CapturedLog::Line> lines;
  return lines;
}
bool g_echo = false;
}  // namespace

void CapturedLog::logger(ncclDebugLogLevel level, unsigned long flags, const char* /*file*/, int /*line*/,
                         const char* fmt, ...) {
  char buf[4096];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  std::lock_guard lock(g_log_mutex);
  log_lines().push_back({level, flags, buf});
  if (g_echo) std::fprintf(stderr, "[nccl-log %d] %s\n", static_cast<int>(level), buf);
}
std::vector<CapturedLog::Line> CapturedLog::lines() {
  std::lock_guard lock(g_log_mutex);
  return log_lines();
}
void CapturedLog::clear() {
  std::lock_guard lock(g_log_mutex);
  log_lines().clear();
}
bool CapturedLog::contains(const std::string& needle) {
  std::lock_guard lock(g_log_mutex);
  for (const auto& l : log_lines())
    if (l.text.find(needle) != std::string::npos) return true;
  return false;
}
void CapturedLog::set_echo(bool echo) { g_echo = echo; }

}  // namespace railscope::abi_test
