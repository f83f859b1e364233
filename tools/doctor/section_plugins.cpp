// SPDX-License-Identifier: Apache-2.0
// doctor's `plugins` section (section_plugins.h): each plugin opened as NCCL would open it, here.
#include "section_plugins.h"

#include <fmt/format.h>

#include <cstdlib>
#include <system_error>

#include "doctor.h"
#include "nccl_library.h"
#include "railscope/pluginload/loader.h"

#ifndef RAILSCOPE_BIN_TO_LIBDIR
#define RAILSCOPE_BIN_TO_LIBDIR "../lib"  // set by tools/doctor/CMakeLists.txt from GNUInstallDirs
#endif

namespace railscope::doctor::plugins {
namespace {

namespace fs = std::filesystem;
using pluginload::PluginKind;

struct Kind {
  PluginKind kind;
  const char* name;
  const char* env;
};
constexpr Kind kKinds[] = {
    {PluginKind::Net, "net", "NCCL_NET_PLUGIN"},
    {PluginKind::Tuner, "tuner", "NCCL_TUNER_PLUGIN"},
    {PluginKind::Profiler, "profiler", "NCCL_PROFILER_PLUGIN"},
};

std::string file_name(const std::string& kind) { return "libnccl-" + kind + "-railscope.so"; }

bool is_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

// glibc words a file that is not there as "<name>: cannot open shared object file: No such file or
// directory"; a missing *dependency* gets the dependency's name in front instead, so only an error that
// starts with the name dlopen was given means "not found".
bool not_found(const std::string& name, const std::string& error) {
  const std::string words = name + ": " + name + ": cannot open shared object file";
  return error.find(words) != std::string::npos;
}

Probe open_as_nccl(const Kind& k, const std::string& origin, const std::string& value, bool selected) {
  Probe p;
  p.kind = k.name;
  p.origin = origin;
  p.requested = value;
  p.selected = selected;
  // NCCL 2.30's lookup order (the newest symbols first): what the training job would get.
  auto loaded = pluginload::load(k.kind, value, pluginload::NcclRelease::V2_30);
  p.tried = loaded.tried;
  p.loaded = static_cast<bool>(loaded);
  p.path = loaded.real_path;
  p.symbol = loaded.symbol;
  p.error = loaded.error;
  p.found = p.loaded || loaded.handle != nullptr;
  // lib/pluginload joins one "<name>: <dlerror>" per name tried; any but "not found" means a file was there.
  for (const auto& name : loaded.tried) {
    if (!p.found && loaded.error.find(name + ": ") != std::string::npos && !not_found(name, loaded.error))
      p.found = true;
  }
  return p;
}

// The fix for what the dynamic loader said (glibc's dlerror wording).
std::string fix_for(const Probe& p) {
  const std::string& e = p.error;
  if (e.find("version `GLIBCXX_") != std::string::npos || e.find("version `CXXABI_") != std::string::npos)
    return "This image's libstdc++ is older than the one the plugin was built against: use a build whose "
           "plugins link libstdc++ statically (RAILSCOPE_STATIC_RUNTIME=ON, the default) or build on the "
           "image's toolchain (docs/compatibility.md)";
  if (e.find("version `GLIBC_") != std::string::npos)
    return "This image's glibc is older than the one the plugin was built against: build railscope on the "
           "oldest glibc you deploy to (docs/compatibility.md lists what each .so needs)";
  if (e.find("wrong ELF class") != std::string::npos || e.find("invalid ELF header") != std::string::npos)
    return "The file is not a shared library for this architecture: install the build for this machine";
  if (e.find("cannot open shared object file") != std::string::npos && p.found)
    return "A library the plugin needs is missing: install it or add its folder to LD_LIBRARY_PATH "
           "(`ldd " +
           (p.path.empty() ? p.requested : p.path) + "` lists them)";
  if (e.find("no supported symbol") != std::string::npos)
    return fmt::format(
        "{} names a library that is not an NCCL {} plugin: point it at "
        "libnccl-{}-railscope.so",
        p.origin, p.kind, p.kind);
  if (!p.found)
    return fmt::format(
        "Give {} an absolute path (e.g. /opt/railscope/lib/{}) or add the plugin's folder "
        "to LD_LIBRARY_PATH in the job's environment",
        p.origin, file_name(p.kind));
  return "Run `ldd` on the plugin to see what the dynamic loader cannot resolve";
}

}  // namespace

fs::path PluginDir::file_for(const std::string& kind, const fs::path& self_exe) const {
  if (origin == "build tree") return self_exe.parent_path() / ".." / "plugin" / kind / file_name(kind);
  return dir / file_name(kind);
}

PluginDir find_plugin_dir(const node::EnvLookup& env, const fs::path& self_exe) {
  if (auto dir = env("RAILSCOPE_PLUGIN_DIR")) return {fs::path(*dir), "RAILSCOPE_PLUGIN_DIR"};
  const fs::path bin = self_exe.parent_path();
  const fs::path installed = bin / RAILSCOPE_BIN_TO_LIBDIR;
  for (const auto& k : kKinds)
    if (is_file(installed / file_name(k.name))) return {installed.lexically_normal(), "installed"};
  for (const auto& k : kKinds)
    if (is_file(bin / ".." / "plugin" / k.name / file_name(k.name))) return {{}, "build tree"};
  return {installed.lexically_normal(), "none"};
}

std::vector<Probe> probe_all(const node::EnvLookup& env, const fs::path& self_exe) {
  std::vector<Probe> out;
  const PluginDir dir = find_plugin_dir(env, self_exe);
  for (const auto& k : kKinds) {
    std::string selected_path;
    const auto value = env(k.env);
    if (!value && k.kind == PluginKind::Net) {
      // Unset: NCCL still tries libnccl-net.so; when an image ships one, it is loaded instead of railscope's.
      Probe d = open_as_nccl(k, k.env, "", false);
      d.nccl_default = true;
      d.requested = "libnccl-net.so";
      if (d.loaded || d.found) out.push_back(d);
    }
    if (value) {
      if (pluginload::candidate_names(k.kind, *value).empty()) continue;  // "none": disabled on purpose
      out.push_back(open_as_nccl(k, k.env, *value, true));
      selected_path = out.back().path;
      // A path that failed to open has no loader answer: the variable's value is the file it names.
      if (selected_path.empty() && value->find('/') != std::string::npos) selected_path = *value;
    }
    const fs::path own = dir.file_for(k.name, self_exe);
    std::error_code ec;
    const fs::path own_real = fs::canonical(own, ec);
    // The same file as the one the variable selects: reported once, as the selected one.
    std::error_code same_ec;
    if (!ec && !selected_path.empty() && fs::equivalent(own_real, selected_path, same_ec)) continue;
    if (dir.origin == "none" || !is_file(own)) {
      Probe p;
      p.kind = k.name;
      p.origin = "railscope_dir";
      p.requested = own.string();
      p.expected = dir.origin == "RAILSCOPE_PLUGIN_DIR";
      p.error = dir.origin == "none" ? "no railscope plugin folder found next to this binary"
                                     : own.string() + ": no such file";
      out.push_back(p);
      continue;
    }
    // An absolute path: NCCL opens it as given, with no search.
    out.push_back(open_as_nccl(k, "railscope_dir", (ec ? own : own_real).string(), false));
  }
  return out;
}

std::vector<diag::Finding> findings_for(const Probe& p) {
  if (p.loaded) return {};
  if (p.nccl_default) {  // a libnccl-net.so NCCL would pick up by default but cannot load: NCCL skips it
    return {};
  }
  if (!p.selected && !p.found && !p.expected) return {};  // railscope's own plugin absent: reported only
  const std::string what = p.selected ? fmt::format("{}={}", p.origin, p.requested) : p.requested;
  std::string detail = fmt::format("the {} plugin ({}) would not load here: {}", p.kind, what, p.error);
  if (p.selected) detail += "; NCCL continues without it and says so only with NCCL_DEBUG=INFO";
  const auto severity = p.selected ? diag::Severity::Error : diag::Severity::Warning;
  const char* id = p.found ? "plugin.load_failed" : "plugin.not_found";
  return {diag::make(id, severity, detail, fix_for(p))};
}

}  // namespace railscope::doctor::plugins

namespace railscope::doctor {

Section section_plugins(const NodeFacts& facts) {
  Section s;
  s.name = "plugins";
  std::error_code ec;
  const std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  const node::EnvLookup env = facts.env ? facts.env : node::process_env();
  const auto dir = plugins::find_plugin_dir(env, self);
  s.json["railscope_dir"] =
      dir.origin == "build tree" ? nlohmann::json(nullptr) : nlohmann::json(dir.dir.string());
  s.json["railscope_dir_origin"] = dir.origin;
  nlohmann::json probes = nlohmann::json::array();
  for (const auto& p : plugins::probe_all(env, self)) {
    probes.push_back({{"kind", p.kind},
                      {"origin", p.nccl_default ? std::string("nccl_default") : p.origin},
                      {"requested", p.requested},
                      {"selected", p.selected},
                      {"found", p.found},
                      {"loads", p.loaded},
                      {"path", known(p.path)},
                      {"symbol", known(p.symbol)},
                      {"tried", p.tried},
                      {"error", p.loaded ? nlohmann::json(nullptr) : known(p.error)}});
    const std::string who = p.nccl_default ? fmt::format("{} unset: NCCL's default libnccl-net.so", p.origin)
                            : p.selected   ? fmt::format("{}={}", p.origin, p.requested)
                                           : "railscope's";
    if (p.loaded)
      s.text.push_back(fmt::format("{:<8} {} → loads: {} ({})", p.kind, who, p.path, p.symbol));
    else
      s.text.push_back(
          fmt::format("{:<8} {} → {}: {}", p.kind, who, p.found ? "does NOT load" : "not found", p.error));
    for (auto& f : plugins::findings_for(p)) s.findings.push_back(std::move(f));
  }
  s.json["probes"] = probes;
  s.json["nccl"] = nullptr;
  // The net plugin selected: the NCCL a job would load decides whether it stays loaded (nccl_library.h).
  const auto net = env("NCCL_NET_PLUGIN");
  if (net && !pluginload::candidate_names(pluginload::PluginKind::Net, *net).empty()) {
    const NcclLibrary nccl = find_nccl_library();
    s.json["nccl"] = {{"found", nccl.found},
                      {"path", known(nccl.path)},
                      {"version", known(nccl.version())},
                      {"error", known(nccl.error)}};
    if (!nccl.version().empty())
      s.text.push_back(fmt::format("{:<8} libnccl.so.2 → NCCL {} ({})", "nccl", nccl.version(), nccl.path));
    else
      s.text.push_back(fmt::format("{:<8} libnccl.so.2 → version unknown: {}", "nccl", nccl.error));
    const auto ref = env("NCCL_NET_PLUGIN_REF_COUNT");
    if (nccl_needs_net_plugin_ref_count(nccl.version_code) && (!ref || std::atoi(ref->c_str()) < 1))
      s.findings.push_back(diag::make(
          "plugin.net_ref_count_unset", diag::Severity::Warning,
          fmt::format("NCCL_NET_PLUGIN={} with NCCL {} ({}) and NCCL_NET_PLUGIN_REF_COUNT {}: NCCL unloads "
                      "the net plugin when the last communicator is destroyed and forgets its name, so the "
                      "next communicator runs on NCCL's own IB or Socket transport",
                      *net, nccl.version(), nccl.path, ref ? "= " + *ref : std::string("unset")),
          "Set NCCL_NET_PLUGIN_REF_COUNT=1 in the job's environment (docs/pytorch.md, section 4)"));
  }
  return s;
}

}  // namespace railscope::doctor
