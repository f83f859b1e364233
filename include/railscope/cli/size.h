// SPDX-License-Identifier: Apache-2.0
// Byte sizes as every `railscope` command takes them on the command line.
//
// K, M, G and T are binary (1024, 1024^2, ...), as NCCL's NCCL_BUFFSIZE-style sizes and nccl-tests' -b/-e
// take them (nccl-tests' parsesize() multiplies 'K' by 1024); KiB/MiB/GiB/TiB say the same explicitly, and
// KB/MB/GB/TB are read as their binary twins too. Units are case-insensitive; a `B` alone means bytes. A
// decimal fraction is allowed when the result is a whole number of bytes (1.5K = 1536, 0.3K is an error).
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace railscope::cli {

// The help text's one line about units, appended to each size flag's description.
inline constexpr const char* kSizeUnitsHelp = "K/M/G/T or KiB/MiB/GiB/TiB, all powers of 1024";

// The size `text` names, or std::nullopt with `error` saying why (empty, negative, junk, a second
// decimal point, a fraction of a byte, above 2^64-1).
std::optional<uint64_t> parse_size(std::string_view text, std::string& error);

// A CLI11 transform: replaces the option's text with its size in bytes, or fails (a usage error) with
// parse_size's reason. `min_bytes` and `max_bytes` bound the result (inclusive).
CLI::Validator size_validator(uint64_t max_bytes = UINT64_MAX, uint64_t min_bytes = 0);

// `--flag SIZE` bound to `target`, with the units stated in its help.
CLI::Option* add_size_option(CLI::App* app, const std::string& name, uint64_t& target,
                             const std::string& description, uint64_t max_bytes = UINT64_MAX,
                             uint64_t min_bytes = 0);

}  // namespace railscope::cli
