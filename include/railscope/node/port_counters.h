// SPDX-License-Identifier: Apache-2.0
// A port's error and traffic counters, as the kernel publishes them under
// /sys/class/infiniband/<dev>/ports/<p>/counters/ (the InfiniBand PortCounters every provider fills) and
// hw_counters/ (provider-specific: mlx5, rxe, efa, bnxt_re, irdma each name theirs), read through the
// sysfs root (RAILSCOPE_SYSFS_ROOT). Each counter gets a category from one table of the names the
// providers use, so the plugins and doctor can say what kind of trouble a rising counter means:
//   loss        retransmissions, sequence errors, ACK timeouts, RNR retries (packets the fabric lost)
//   congestion  ECN marks and congestion notification packets (CNPs)
//   pause       PFC pause frames
//   link        symbol errors, link recovery, link downed, integrity errors
//   discard     packets the port or the switch had to drop
//   traffic     packets and bytes moved
// Unknown counters are kept (category Other) and shown, never dropped.
// Sources for the names: the kernel's InfiniBand sysfs ABI (Documentation/ABI/stable/sysfs-class-infiniband),
// the mlx5 and rxe drivers' hw_counters tables (drivers/infiniband/hw/mlx5/counters.c,
// drivers/infiniband/sw/rxe/rxe_hw_counters.c) and NVIDIA's "Understanding mlx5 Linux counters" notes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace railscope::node {

class Sysfs;

enum class CounterCategory { Loss, Congestion, Pause, Link, Discard, Traffic, Other };
std::string_view to_string(CounterCategory c);  // "loss", "congestion", ...

// The category of a counter by its name as the kernel publishes it (counters/, hw_counters/ or the
// netdev's ethtool statistics; the table is lib/node/counter_category.cpp).
CounterCategory counter_category(std::string_view name);

// Where a counter comes from: counters/, hw_counters/ or the RoCE netdev's ethtool statistics.
enum class CounterSource { Port, Hw, Ethtool };
std::string_view to_string(CounterSource s);  // "counters", "hw_counters", "ethtool"

struct Counter {
  std::string name;
  CounterCategory category = CounterCategory::Other;
  uint64_t value = 0;
  bool hw = false;                             // from hw_counters/ (provider-specific), not counters/
  CounterSource source = CounterSource::Port;  // Hw when hw; Ethtool for the netdev's statistics
};

struct PortCounters {
  std::string device;
  int port = 0;
  std::vector<Counter> counters;   // sorted by (hw, source, name); unreadable files are left out
  std::string netdev;              // RoCE: the netdev whose ethtool statistics are included; else empty
  bool ethtool_available = false;  // the netdev answered with statistics
};

// Reads counters/ and hw_counters/ of one port. A port without either folder has no counters (the
// result is empty), never an error.
PortCounters read_port_counters(const Sysfs& sysfs, const std::string& device, int port);

// Sorts by (hw, source, name), the order read_port_counters() and PortSampler give.
void sort_counters(std::vector<Counter>* counters);

struct CounterDelta {
  std::string name;
  CounterCategory category = CounterCategory::Other;
  uint64_t delta = 0;
  bool reset = false;  // the counter went down (cleared, driver reloaded): delta counts from zero
  CounterSource source = CounterSource::Port;
  uint64_t value = 0;  // the value in the later snapshot
};

// What changed between two snapshots of the same port: one entry per counter present in both whose
// value differs. InfiniBand error counters saturate rather than wrap, and hw_counters are 64-bit, so a
// value that went down was reset: its delta is the new value.
std::vector<CounterDelta> counter_deltas(const PortCounters& before, const PortCounters& after);

// A counter file's content: a whole decimal number up to 2^64-1 (hw_counters and port_xmit_data are
// 64-bit), trailing whitespace allowed; nullopt on anything else.
std::optional<uint64_t> parse_counter_value(std::string_view text);

// Sum of the deltas of one category.
uint64_t category_total(const std::vector<CounterDelta>& deltas, CounterCategory category);

}  // namespace railscope::node
