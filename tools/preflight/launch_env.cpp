// SPDX-License-Identifier: Apache-2.0
// Rank, world size and rendezvous address from the launcher's environment or from flags (see the header
// for the launchers and their documentation).
#include "launch_env.h"

#include <fmt/format.h>

#include <array>
#include <cctype>

namespace railscope::preflight {
namespace {

// A non-negative decimal of at most 9 digits, nothing else (no sign, no spaces, no suffix).
std::optional<int> parse_count(std::string_view s) {
  if (s.empty() || s.size() > 9) return std::nullopt;
  int v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

struct Source {
  std::string_view name;
  std::string_view rank_var;
  std::string_view world_var;  // empty: the world size comes from --world-size or WORLD_SIZE
};

// Innermost launcher first.
constexpr std::array<Source, 5> kSources{{
    {"torchrun", "RANK", "WORLD_SIZE"},
    {"openmpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
    {"pmi", "PMI_RANK", "PMI_SIZE"},
    {"kubernetes", "JOB_COMPLETION_INDEX", ""},
    {"slurm", "SLURM_PROCID", "SLURM_NTASKS"},
}};

std::string shown(std::string_view v) {
  std::string out;
  for (char c : v.substr(0, 40)) out += std::isprint(static_cast<unsigned char>(c)) ? c : '?';
  return "'" + out + (v.size() > 40 ? "...'" : "'");
}

bool read_count(const Env& env, std::string_view var, int* out, std::string* error) {
  const auto v = env(var);
  if (!v) return false;
  const auto n = parse_count(*v);
  if (!n) {
    *error = fmt::format("{}={} is not a non-negative integer", var, shown(*v));
    return false;
  }
  *out = *n;
  return true;
}

LaunchResult fail(std::string e) { return {std::nullopt, std::move(e)}; }

}  // namespace

bool parse_host_port(std::string_view text, std::string* host, uint16_t* port, std::string* error) {
  std::string_view h = text;
  std::string_view p;
  if (!text.empty() && text.front() == '[') {
    const size_t close = text.find(']');
    if (close == std::string_view::npos) {
      *error = fmt::format("{}: '[' without ']'", shown(text));
      return false;
    }
    h = text.substr(1, close - 1);
    const std::string_view rest = text.substr(close + 1);
    if (!rest.empty()) {
      if (rest.front() != ':') {
        *error = fmt::format("{}: expected ':PORT' after ']'", shown(text));
        return false;
      }
      p = rest.substr(1);
      if (p.empty()) p = "-";
    }
  } else if (const size_t colon = text.rfind(':'); colon != std::string_view::npos) {
    if (text.find(':') != colon) {
      *error = fmt::format("{}: an IPv6 address needs brackets: [ADDR]:PORT", shown(text));
      return false;
    }
    h = text.substr(0, colon);
    p = text.substr(colon + 1);
    if (p.empty()) p = "-";
  }
  if (h.empty() || h.size() > 253) {
    *error = fmt::format("{}: no host", shown(text));
    return false;
  }
  for (char c : h)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_' && c != ':') {
      *error = fmt::format("{}: invalid character in the host", shown(text));
      return false;
    }
  if (!p.empty()) {
    const auto n = parse_count(p);
    if (!n || *n < 1 || *n > 65535) {
      *error = fmt::format("{}: the port must be 1..65535", shown(text));
      return false;
    }
    *port = static_cast<uint16_t>(*n);
  }
  *host = std::string(h);
  return true;
}

std::string first_slurm_host(std::string_view list) {
  // Hostlist syntax (https://slurm.schedmd.com/hostlist.html): comma-separated names, each a prefix with
  // an optional bracketed set of numeric ranges and suffix: "gpu[003-010,012]-ib,login1".
  std::string out;
  size_t i = 0;
  while (i < list.size() && list[i] != ',') {
    if (list[i] == '[') {
      const size_t close = list.find(']', i);
      if (close == std::string_view::npos) return {};
      size_t j = i + 1;
      const size_t start = j;
      while (j < close && std::isdigit(static_cast<unsigned char>(list[j]))) ++j;
      if (j == start || (j != close && list[j] != '-' && list[j] != ',')) return {};
      out += list.substr(start, j - start);
      i = close + 1;
      continue;
    }
    const char c = list[i];
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') return {};
    out += c;
    ++i;
  }
  return out.size() > 253 ? std::string() : out;
}

LaunchResult resolve_launch(const Env& env, const LaunchFlags& flags) {
  Launch l;
  std::string error;
  const Source* src = nullptr;
  int rank = -1;
  int world = -1;
  for (const auto& s : kSources) {
    const bool has_rank = env(s.rank_var).has_value();
    if (!has_rank) {
      // WORLD_SIZE alone is an Indexed Job's world size when JOB_COMPLETION_INDEX is set.
      if (!s.world_var.empty() && env(s.world_var) && !(s.name == "torchrun" && env("JOB_COMPLETION_INDEX")))
        return fail(fmt::format("{} is set but {} is not (launcher: {})", s.world_var, s.rank_var, s.name));
      continue;
    }
    src = &s;
    if (!read_count(env, s.rank_var, &rank, &error)) return fail(error);
    if (!s.world_var.empty()) {
      if (!read_count(env, s.world_var, &world, &error))
        return fail(error.empty() ? fmt::format("{} is set but {} is not (launcher: {})", s.rank_var,
                                                s.world_var, s.name)
                                  : error);
    } else if (!flags.world && env("WORLD_SIZE") && !read_count(env, "WORLD_SIZE", &world, &error)) {
      return fail(error);
    }
    break;
  }
  l.source = src ? std::string(src->name) : flags.rank || flags.world ? "flags" : "single";
  if (flags.rank) rank = *flags.rank;
  if (flags.world) world = *flags.world;
  if (!src && !flags.rank && !flags.world) rank = 0, world = 1;  // no launcher: this node alone
  if (rank < 0)
    return fail(
        "--world-size is given but no rank: give --rank or start under a launcher (srun, mpirun, "
        "torchrun, an Indexed Job)");
  if (world < 0)
    return fail(src ? fmt::format("{} gives the rank but nothing gives the world size: give --world-size "
                                  "(an Indexed Job's completions) or set WORLD_SIZE",
                                  src->rank_var)
                    : "--rank is given but no world size: give --world-size");
  if (world < 1 || world > kMaxWorld)
    return fail(fmt::format("world size {} is out of range 1..{} (from {})", world, kMaxWorld,
                            flags.world ? "--world-size" : l.source));
  if (rank >= world)
    return fail(fmt::format("rank {} is not below the world size {} (from {})", rank, world,
                            flags.rank || flags.world ? "flags and " + l.source : l.source));
  l.rank = rank;
  l.world = world;

  if (!flags.rendezvous.empty() && !flags.k8s_service.empty())
    return fail("--rendezvous and --k8s-service both name rank 0's address: give one");
  if (!flags.rendezvous.empty()) {
    if (!parse_host_port(flags.rendezvous, &l.host, &l.port, &error)) return fail("--rendezvous " + error);
  } else if (!flags.k8s_service.empty()) {
    // The pod's hostname is <job-name>-<index>; rank 0 is <job-name>-0.<service>.
    const std::string& h = flags.own_hostname;
    const size_t dash = h.rfind('-');
    if (dash == std::string::npos || dash == 0 || !parse_count(std::string_view(h).substr(dash + 1)))
      return fail(
          fmt::format("--k8s-service: the hostname {} is not <job-name>-<index> (is the pod part of "
                      "an Indexed Job?)",
                      shown(h)));
    std::string target = h.substr(0, dash) + "-0." + flags.k8s_service;
    if (!parse_host_port(target, &l.host, &l.port, &error)) return fail("--k8s-service " + error);
  } else if (const auto addr = env("MASTER_ADDR")) {
    if (!parse_host_port(*addr, &l.host, &l.port, &error)) return fail("MASTER_ADDR=" + error);
    if (const auto port = env("MASTER_PORT")) {
      const auto n = parse_count(*port);
      if (!n || *n < 1 || *n > 65535) return fail(fmt::format("MASTER_PORT={} is not a port", shown(*port)));
      l.port = static_cast<uint16_t>(*n);
    }
  } else if (src && src->name == "slurm" && (env("SLURM_STEP_NODELIST") || env("SLURM_JOB_NODELIST"))) {
    // Task 0 runs on the first node of the step with srun's default block distribution.
    const std::string list = env("SLURM_STEP_NODELIST").value_or(env("SLURM_JOB_NODELIST").value_or(""));
    l.host = first_slurm_host(list);
    if (l.host.empty())
      return fail(fmt::format("SLURM_STEP_NODELIST/SLURM_JOB_NODELIST={} is not a hostlist", shown(list)));
  } else if (world == 1) {
    l.host = "127.0.0.1";
  } else {
    return fail(
        fmt::format("rank {} of {} ({}) has no rendezvous address: set MASTER_ADDR (and MASTER_PORT) "
                    "or give --rendezvous HOST:PORT",
                    rank, world, l.source));
  }
  return {l, {}};
}

}  // namespace railscope::preflight
