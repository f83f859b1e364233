// SPDX-License-Identifier: Apache-2.0
// Fuzzes the TCP engine's wire format (plugin/net/tcp/wire.h, docs/tcp.md): the listen handle, the
// hello of every socket, the receiver's answer and the per-message header, which arrive from the
// network, and the chunk plan both ends compute for a message.
//
// Input: byte 0 picks the target, the rest feeds it.
//   0  decode_handle(128 bytes)      2  decode_ack(16 bytes)
//   1  decode_hello(64 bytes)        3  decode_header(16 bytes)
//   4  plan_chunks(size u64, nsocks u8, min_chunk u32, seq u64), size below 2^48 and nsocks 1..64 as
//      the engine calls it (a message fits in a posted buffer; options.cpp caps the sockets at 64);
//      nsocks outside that range and size 0 must give an empty plan.
// Properties: whatever decodes re-encodes to bytes that decode to the same values (the header byte
// for byte); a decoder reads only its fixed-size input (copied to an allocation of exactly that
// size); a plan covers [0, size) exactly with contiguous non-empty chunks, at most one per socket,
// every socket index in 0..nsocks-1, and the sender and receiver (two calls) agree.
#include <array>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "plugin/net/tcp/wire.h"
#include "tests/fuzz/fuzz_check.h"

namespace rt = railscope::net::tcp;
using railscope::fuzz::Input;

namespace {

// Exactly N bytes of input, zero-padded, in an allocation of exactly N bytes.
template <size_t N>
std::unique_ptr<std::array<std::byte, N>> fixed(Input& in) {
  auto out = std::make_unique<std::array<std::byte, N>>();
  const std::vector<std::byte> b = in.bytes(N);
  if (!b.empty()) std::memcpy(out->data(), b.data(), b.size());
  return out;
}

bool same_handle(const rt::ListenHandle& a, const rt::ListenHandle& b) {
  return a.family == b.family && a.port == b.port && a.addr == b.addr && a.nonce == b.nonce &&
         a.connect_id == b.connect_id;
}

bool same_hello(const rt::Hello& a, const rt::Hello& b) {
  return a.role == b.role && a.nonce == b.nonce && a.conn_id == b.conn_id && a.index == b.index &&
         a.nsocks == b.nsocks && a.min_chunk == b.min_chunk && a.inline_max == b.inline_max &&
         a.host == b.host;
}

void handle(Input& in) {
  auto bytes = fixed<railscope::net::kHandleSize>(in);
  std::string why;
  const auto h = rt::decode_handle(*bytes, &why);
  if (!h) {
    RS_FUZZ_CHECK(!why.empty(), "a refused handle must say why");
    return;
  }
  RS_FUZZ_CHECK(h->family == 4 || h->family == 6, "family %d accepted", h->family);
  RS_FUZZ_CHECK(h->port != 0, "port 0 accepted");
  auto enc = std::make_unique<std::array<std::byte, railscope::net::kHandleSize>>();
  rt::encode_handle(*h, *enc);
  const auto again = rt::decode_handle(*enc, &why);
  RS_FUZZ_CHECK(again && same_handle(*h, *again), "handle does not survive encode/decode: %s", why.c_str());
  // The connect id is outside the checksum: rewriting it keeps the handle valid.
  rt::store_connect_id(*enc, ~h->connect_id);
  const auto stored = rt::decode_handle(*enc, &why);
  rt::ListenHandle want = *h;
  want.connect_id = ~h->connect_id;
  RS_FUZZ_CHECK(stored && same_handle(want, *stored), "store_connect_id changed more than the id: %s",
                why.c_str());
  (void)rt::handle_peer_text(*h);
}

void hello(Input& in) {
  auto bytes = fixed<rt::kHelloSize>(in);
  std::string why;
  const auto h = rt::decode_hello(*bytes, &why);
  if (!h) {
    RS_FUZZ_CHECK(!why.empty(), "a refused hello must say why");
    return;
  }
  RS_FUZZ_CHECK(h->nsocks >= 1 && h->nsocks <= rt::kMaxSockets && h->index < h->nsocks,
                "socket %d of %d accepted", h->index, h->nsocks);
  RS_FUZZ_CHECK(h->host.size() <= 23, "host of %zu bytes", h->host.size());
  for (char c : h->host) RS_FUZZ_CHECK(c >= 0x20 && c <= 0x7e, "unprintable host byte %d", c);
  auto enc = std::make_unique<std::array<std::byte, rt::kHelloSize>>();
  rt::encode_hello(*h, enc.get());
  const auto again = rt::decode_hello(*enc, &why);
  RS_FUZZ_CHECK(again && same_hello(*h, *again), "hello does not survive encode/decode: %s", why.c_str());
}

void ack(Input& in) {
  auto bytes = fixed<rt::kAckSize>(in);
  std::string why;
  const auto code = rt::decode_ack(*bytes, &why);
  if (!code) {
    RS_FUZZ_CHECK(!why.empty(), "a refused answer must say why");
    return;
  }
  auto enc = std::make_unique<std::array<std::byte, rt::kAckSize>>();
  rt::encode_ack(*code, enc.get());
  const auto again = rt::decode_ack(*enc, &why);
  RS_FUZZ_CHECK(again && *again == *code, "answer does not survive encode/decode: %s", why.c_str());
}

void header(Input& in) {
  auto bytes = fixed<rt::kHeaderSize>(in);
  const rt::MsgHeader h = rt::decode_header(bytes->data());
  auto enc = std::make_unique<std::array<std::byte, rt::kHeaderSize>>();
  rt::encode_header(h, enc->data());
  RS_FUZZ_CHECK(*enc == *bytes, "the message header does not re-encode byte for byte");
  const rt::MsgHeader again = rt::decode_header(enc->data());
  RS_FUZZ_CHECK(again.size == h.size && again.tag == h.tag && again.seq == h.seq, "header values changed");
}

void plan(Input& in) {
  const uint64_t raw_size = in.le(8);
  const uint8_t raw_socks = in.u8();
  const auto min_chunk = static_cast<size_t>(in.le(4));
  const uint64_t seq = in.le(8);
  // The high bit of the socket byte asks for 0 or fewer sockets (and any size): an empty plan.
  const bool none = (raw_socks & 0x80) != 0;
  const size_t size = none ? raw_size : raw_size % (uint64_t{1} << 48);
  const int nsocks = none ? -(raw_socks & 0x7f) : raw_socks % rt::kMaxSockets + 1;

  const rt::ChunkPlan p = rt::plan_chunks(size, nsocks, min_chunk, seq);
  if (size == 0 || nsocks < 1) {
    RS_FUZZ_CHECK(p.count == 0, "plan of %d chunks for size %zu on %d sockets", p.count, size, nsocks);
    return;
  }
  RS_FUZZ_CHECK(p.count >= 1 && p.count <= nsocks, "%d chunks on %d sockets (size %zu, min_chunk %zu)",
                p.count, nsocks, size, min_chunk);
  RS_FUZZ_CHECK(p.chunk >= 1, "chunk of 0 bytes");
  size_t covered = 0;
  bool used[rt::kMaxSockets] = {};
  for (int i = 0; i < p.count; ++i) {
    RS_FUZZ_CHECK(p.offset(i) == covered, "chunk %d starts at %zu, previous ended at %zu", i, p.offset(i),
                  covered);
    const size_t len = p.length(i, size);
    RS_FUZZ_CHECK(len >= 1 && len <= p.chunk && len <= size - covered, "chunk %d of %zu bytes", i, len);
    covered += len;
    const int s = p.socket(i, nsocks);
    RS_FUZZ_CHECK(s >= 0 && s < nsocks, "chunk %d on socket %d of %d", i, s, nsocks);
    RS_FUZZ_CHECK(!used[s], "two chunks on socket %d", s);
    used[s] = true;
  }
  RS_FUZZ_CHECK(covered == size, "chunks cover %zu of %zu bytes", covered, size);
  const rt::ChunkPlan q = rt::plan_chunks(size, nsocks, min_chunk, seq);
  RS_FUZZ_CHECK(q.chunk == p.chunk && q.count == p.count && q.first == p.first, "two plans differ");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Input in(data, size);
  switch (in.u8() % 5) {
    case 0: handle(in); break;
    case 1: hello(in); break;
    case 2: ack(in); break;
    case 3: header(in); break;
    default: plan(in); break;
  }
  return 0;
}
