// SPDX-License-Identifier: Apache-2.0
#include "railscope/cli/usage.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <exception>
#include <numeric>

namespace railscope::cli {

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), size_t{0});
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

std::string closest_match(std::string_view typed, const std::vector<std::string>& names) {
  std::string best;
  size_t best_distance = SIZE_MAX;
  for (const std::string& n : names) {
    const size_t d = edit_distance(typed, n);
    if (d < best_distance) best_distance = d, best = n;
  }
  if (best.empty() || best_distance > 2 || 2 * best_distance >= typed.size()) return {};
  return best;
}

namespace {

// The command path of `app` as the user typed it: "railscope netbench".
std::string path_of(const CLI::App* app) {
  std::string out = app->get_name();
  for (const CLI::App* p = app->get_parent(); p != nullptr; p = p->get_parent())
    out = p->get_name() + " " + out;
  return out;
}

std::vector<std::string> subcommand_names(CLI::App* app) {
  std::vector<std::string> names;
  for (const CLI::App* s : app->get_subcommands(std::function<bool(CLI::App*)>{}))
    if (!s->get_name().empty()) names.push_back(s->get_name());
  std::sort(names.begin(), names.end());
  return names;
}

// "--json", "-v", ... of `app` and the apps above it (options fall through to subcommands).
std::vector<std::string> option_names(CLI::App* app) {
  std::vector<std::string> names;
  for (CLI::App* scope = app; scope != nullptr; scope = scope->get_parent())
    for (const CLI::Option* o : scope->get_options()) {
      for (const std::string& l : o->get_lnames()) names.push_back("--" + l);
      for (const std::string& s : o->get_snames()) names.push_back("-" + s);
    }
  return names;
}

bool takes_positionals(CLI::App* app) {
  return !app->get_options([](const CLI::Option* o) { return o->get_positional(); }).empty();
}

CLI::App* find_subcommand(CLI::App* app, const std::string& name) {
  for (CLI::App* s : app->get_subcommands(std::function<bool(CLI::App*)>{}))
    if (s->check_name(name)) return s;
  return nullptr;
}

// The deepest subcommand CLI11 had reached when it stopped.
const CLI::App* deepest_parsed(const CLI::App* app) {
  for (;;) {
    const auto parsed = app->get_subcommands();
    if (parsed.empty()) return app;
    app = parsed.back();
  }
}

}  // namespace

std::string unknown_command_message(CLI::App& app, const std::vector<std::string>& args) {
  CLI::App* current = &app;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") break;
    if (a.size() > 1 && a[0] == '-') {
      // An option that takes a value consumes the next word ("--min-size 8"); it may belong to an app
      // above this one (the top level's --log-level falls through to every command).
      const std::string name = a.substr(0, a.find('='));
      const CLI::Option* o = nullptr;
      for (CLI::App* scope = current; scope != nullptr && o == nullptr; scope = scope->get_parent())
        o = scope->get_option_no_throw(name);
      if (o == nullptr) {
        // Found nowhere: say so here, before CLI11 reports something else first (a missing command).
        const std::string near = closest_match(name, option_names(current));
        return fmt::format("{}: unknown option '{}'{}", path_of(current), name,
                           near.empty() ? "" : fmt::format("; did you mean '{}'?", near));
      }
      if (a.find('=') == std::string::npos && o->get_expected_min() > 0 && !o->get_positional()) ++i;
      continue;
    }
    if (CLI::App* sub = find_subcommand(current, a)) {
      current = sub;
      continue;
    }
    const auto names = subcommand_names(current);
    if (names.empty() || takes_positionals(current)) return {};
    const std::string near = closest_match(a, names);
    return fmt::format("{}: unknown command '{}'; {}", path_of(current), a,
                       near.empty() ? fmt::format("the commands are: {}", fmt::join(names, ", "))
                                    : fmt::format("did you mean '{}'?", near));
  }
  return {};
}

int run(CLI::App& app, int argc, const char* const* argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (const std::string unknown = unknown_command_message(app, args); !unknown.empty()) {
    std::fprintf(stderr, "%s\nRun with --help for the list of commands.\n", unknown.c_str());
    return kExitUsage;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::RuntimeError& e) {
    return e.get_exit_code();  // a command's own status; it has said why
  } catch (const CLI::Success& e) {
    return app.exit(e);  // --help, --version
  } catch (const CLI::ParseError& e) {
    const CLI::App* where = deepest_parsed(&app);
    std::fprintf(stderr, "%s: %s\nRun with --help for more information.\n", path_of(where).c_str(), e.what());
    return kExitUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error: %s\n", app.get_name().c_str(), e.what());
    return 1;
  }
  return 0;
}

}  // namespace railscope::cli
