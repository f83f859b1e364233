// SPDX-License-Identifier: Apache-2.0
#include "railscope/cli/size.h"

#include <fmt/format.h>

#include <cctype>

namespace railscope::cli {

namespace {

constexpr uint64_t kKi = 1024;
__extension__ using u128 = unsigned __int128;  // fraction * 2^40 needs more than 64 bits

// Multiplier of a unit suffix (case-insensitive); 0 when unknown.
uint64_t unit_multiplier(std::string_view unit) {
  std::string u(unit);
  for (char& c : u) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (u.empty() || u == "B") return 1;
  static constexpr const char* kPrefixes = "KMGT";
  uint64_t mult = 1;
  for (int i = 0; i < 4; ++i) {
    mult *= kKi;
    const char p = kPrefixes[i];
    if (u == std::string(1, p) || u == std::string(1, p) + "B" || u == std::string(1, p) + "IB") return mult;
  }
  return 0;
}

bool mul_add(uint64_t a, uint64_t b, uint64_t add, uint64_t& out) {
  uint64_t prod = 0;
  if (__builtin_mul_overflow(a, b, &prod)) return false;
  return !__builtin_add_overflow(prod, add, &out);
}

}  // namespace

std::optional<uint64_t> parse_size(std::string_view text, std::string& error) {
  const std::string quoted = fmt::format("'{}'", text);
  if (text.empty()) {
    error = "empty size (examples: 8, 64K, 1MiB, 1.5G)";
    return std::nullopt;
  }
  if (text.front() == '-') {
    error = fmt::format("size {} is negative", quoted);
    return std::nullopt;
  }
  size_t pos = 0;
  auto digits = [&](std::string_view& out) {
    const size_t start = pos;
    while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) ++pos;
    out = text.substr(start, pos - start);
  };
  std::string_view whole, fraction;
  digits(whole);
  bool has_point = false;
  if (pos < text.size() && text[pos] == '.') {
    has_point = true;
    ++pos;
    digits(fraction);
  }
  const std::string_view unit = text.substr(pos);
  if ((whole.empty() && fraction.empty()) || (has_point && fraction.empty())) {
    error = fmt::format("not a size: {} (examples: 8, 64K, 1MiB, 1.5G)", quoted);
    return std::nullopt;
  }
  const uint64_t mult = unit_multiplier(unit);
  if (mult == 0) {
    error = fmt::format("unknown unit '{}' in size {} (B, K, M, G, T or KiB, MiB, GiB, TiB: powers of 1024)",
                        unit, quoted);
    return std::nullopt;
  }
  // whole * mult + fraction * mult / 10^digits, exactly.
  uint64_t value = 0;
  for (char c : whole)
    if (!mul_add(value, 10, static_cast<uint64_t>(c - '0'), value)) {
      error = fmt::format("size {} is too large (at most {} bytes)", quoted, UINT64_MAX);
      return std::nullopt;
    }
  if (!mul_add(value, mult, 0, value)) {
    error = fmt::format("size {} is too large (at most {} bytes)", quoted, UINT64_MAX);
    return std::nullopt;
  }
  if (!fraction.empty()) {
    // mult is at most 2^40, so 19 significant fraction digits would overflow; 12 are plenty.
    if (fraction.size() > 12) {
      error = fmt::format("size {} has more decimals than a byte count needs", quoted);
      return std::nullopt;
    }
    u128 num = 0, den = 1;
    for (char c : fraction) {
      num = num * 10 + static_cast<unsigned>(c - '0');
      den *= 10;
    }
    num *= mult;
    if (num % den != 0) {
      error = fmt::format("size {} is not a whole number of bytes", quoted);
      return std::nullopt;
    }
    const u128 extra = num / den;
    if (extra > UINT64_MAX - value) {
      error = fmt::format("size {} is too large (at most {} bytes)", quoted, UINT64_MAX);
      return std::nullopt;
    }
    value += static_cast<uint64_t>(extra);
  }
  return value;
}

CLI::Validator size_validator(uint64_t max_bytes, uint64_t min_bytes) {
  return CLI::Validator(
      [max_bytes, min_bytes](std::string& text) -> std::string {
        std::string error;
        const auto v = parse_size(text, error);
        if (!v) return error;
        if (*v > max_bytes)
          return fmt::format("size '{}' is above the largest allowed, {} bytes", text, max_bytes);
        if (*v < min_bytes)
          return fmt::format("size '{}' is below the smallest allowed, {} byte{}", text, min_bytes,
                             min_bytes == 1 ? "" : "s");
        text = std::to_string(*v);
        return {};
      },
      "SIZE", "size");
}

CLI::Option* add_size_option(CLI::App* app, const std::string& name, uint64_t& target,
                             const std::string& description, uint64_t max_bytes, uint64_t min_bytes) {
  return app->add_option(name, target, fmt::format("{} ({})", description, kSizeUnitsHelp))
      ->transform(size_validator(max_bytes, min_bytes));
}

}  // namespace railscope::cli
