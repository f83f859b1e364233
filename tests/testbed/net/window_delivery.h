// What the window cases (large_window.h, receive_window.h) check once every request is done: message
// k was reported sent and received with the size it was sent with, and its bytes arrived in the
// receive posted in the same place, in order.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

template <class SizeOf>
inline bool delivered_in_order(size_t n, SizeOf size_of, const std::vector<int>& ssz,
                               const std::vector<int>& rsz, const uint8_t* sbuf, const uint8_t* rbuf,
                               size_t slice, std::string* why) {
  for (size_t k = 0; k < n; ++k) {
    const auto want = static_cast<int>(size_of(k));
    if (ssz[k] != want || rsz[k] != want)
      return *why = "message " + std::to_string(k) + ": sent " + std::to_string(ssz[k]) + ", received " +
                    std::to_string(rsz[k]) + " bytes, " + std::to_string(want) + " expected",
             false;
    if (std::memcmp(sbuf + k * slice, rbuf + k * slice, size_of(k)) != 0)
      return *why = "message " + std::to_string(k) + " payload differs", false;
  }
  return true;
}
