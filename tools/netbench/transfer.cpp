// SPDX-License-Identifier: Apache-2.0
#include "transfer.h"

#include <sched.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>

#include "railscope/nccl/net.h"

namespace railscope::netbench {

namespace {

uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ULL + static_cast<uint64_t>(ts.tv_nsec);
}

// Fails a phase that makes no progress for the session's timeout: netbench never hangs silently.
class Stall {
 public:
  Stall(const Session& s, const char* what)
      : limit_ns_(static_cast<uint64_t>(s.timeout().count()) * 1000000000ULL),
        what_(what),
        last_(now_ns()),
        idle_(s.idle()) {}
  // Progress only sets a flag: the clock is read in check(), one call in 1024 (a clock read is a
  // system call on hosts without a vDSO clock, the soft-RoCE test bed's guest among them).
  void progress() { progressed_ = true; }
  // A pass that completed nothing: give the CPU away, or sleep 50 us, if the session says so.
  void idle() const {
    if (idle_ == Session::Idle::Yield) sched_yield();
    if (idle_ == Session::Idle::Sleep) std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  void check(uint64_t done, uint64_t total) {
    if ((++calls_ & 1023) != 0) return;
    const uint64_t now = now_ns();
    if (progressed_) {
      progressed_ = false;
      last_ = now;
      return;
    }
    if (now - last_ > limit_ns_)
      throw BenchError(std::string(what_) + ": no completion for " +
                       std::to_string(limit_ns_ / 1000000000ULL) + " s after " + std::to_string(done) +
                       " of " + std::to_string(total) +
                       " requests (the plugin reported neither progress nor an error)");
  }

 private:
  uint64_t limit_ns_;
  const char* what_;
  uint64_t last_;
  bool progressed_ = false;
  Session::Idle idle_;
  uint64_t calls_ = 0;
};

void record_mismatch(PhaseResult& r, const std::string& text) {
  if (r.mismatches++ == 0) std::snprintf(r.first_mismatch, sizeof r.first_mismatch, "%s", text.c_str());
}

void check_message(PhaseResult& r, const Payload& payload, const unsigned char* buf, size_t expected_size,
                   int got_size, uint64_t seq, bool verify) {
  if (got_size < 0 || static_cast<size_t>(got_size) != expected_size) {
    record_mismatch(r, "message " + std::to_string(seq) + ": test() reported " + std::to_string(got_size) +
                           " bytes, sent " + std::to_string(expected_size));
    return;
  }
  if (verify) {
    if (auto m = payload.verify(buf, expected_size, seq)) {
      record_mismatch(r, Payload::describe(*m, seq, expected_size));
      return;
    }
  }
  ++r.messages_ok;
}

// Posts one isend, retrying while the plugin answers "not now" (*request == NULL).
void* post_send(Session& s, Stall& stall, void* data, size_t size, int tag, void* mh) {
  for (;;) {
    void* req = nullptr;
    check(s.api().isend(s.send_comm(), data, size, tag, mh, &req), "isend");
    if (req != nullptr) return req;
    stall.idle();
    stall.check(0, 1);
  }
}

void wait(Session& s, Stall& stall, void* req, int* sizes, const char* call) {
  for (;;) {
    int done = 0;
    check(s.api().test(req, &done, sizes), call);
    if (done) return;
    stall.idle();
    stall.check(0, 1);
  }
}

}  // namespace

SlotLayout slot_layout(const SizePlan& plan) {
  SlotLayout l;
  l.recv_slots = std::max<uint32_t>(1, plan.window * plan.recvs);
  l.send_slots = l.recv_slots + 1;
  return l;
}

void prepare_slots(Session& s, const SizePlan& plan, const Payload& payload, uint32_t send_slots,
                   uint32_t recv_slots) {
  const size_t size = plan.size;
  for (uint32_t i = 0; i < send_slots; ++i) payload.fill(s.send_region().data() + i * size, size, i);
  std::memset(s.recv_region().data(), 0xa5, size * recv_slots);
}

SendResult send_stream(Session& s, const SizePlan& plan, bool verify) {
  const SlotLayout l = slot_layout(plan);
  const uint32_t window = l.recv_slots;  // sends in flight
  const size_t size = plan.size;
  std::vector<void*> ring(window, nullptr);
  Stall stall(s, "bandwidth (sender)");
  uint64_t posted = 0, completed = 0, t0 = 0;
  const uint64_t total = plan.messages;
  unsigned char* base = s.send_region().data();
  void* mh = s.send_region().mhandle();
  t0 = now_ns();
  while (completed < total) {
    bool moved = false;
    if (posted < total && posted - completed < window) {
      unsigned char* buf = base + (posted % l.send_slots) * size;
      if (verify) Payload::stamp(buf, size, posted);
      void* req = nullptr;
      check(s.api().isend(s.send_comm(), buf, size, static_cast<int>(posted % plan.recvs), mh, &req),
            "isend");
      if (req != nullptr) {
        ring[posted % window] = req;
        ++posted;
        moved = true;
        stall.progress();
      }
    }
    if (completed < posted) {
      int done = 0;
      int sent = -1;
      check(s.api().test(ring[completed % window], &done, &sent), "test (send)");
      if (done) {
        if (sent >= 0 && static_cast<size_t>(sent) != size)
          throw BenchError("test() reported " + std::to_string(sent) + " bytes sent for a " +
                           std::to_string(size) + "-byte isend");
        ++completed;
        moved = true;
        stall.progress();
        if (completed == plan.warmup) t0 = now_ns();
      }
    }
    if (!moved) stall.idle();
    stall.check(completed, total);
  }
  SendResult r;
  r.elapsed_ns = now_ns() - t0;
  r.timed_bytes = (total - std::min<uint64_t>(plan.warmup, total)) * size;
  return r;
}

PhaseResult receive_stream(Session& s, const SizePlan& plan, const Payload& payload, bool verify) {
  const SlotLayout l = slot_layout(plan);
  const uint32_t n = plan.recvs;
  const uint32_t window = plan.window;
  const size_t size = plan.size;
  const uint64_t total_reqs = plan.messages / n;
  std::vector<void*> ring(window, nullptr);
  void* data[NCCL_NET_MAX_REQUESTS];
  size_t sizes[NCCL_NET_MAX_REQUESTS];
  int tags[NCCL_NET_MAX_REQUESTS];
  void* mhs[NCCL_NET_MAX_REQUESTS];
  int got[NCCL_NET_MAX_REQUESTS];
  PhaseResult result;
  Stall stall(s, "bandwidth (receiver)");
  unsigned char* base = s.recv_region().data();
  uint64_t posted = 0, completed = 0, t0 = now_ns();
  while (completed < total_reqs) {
    bool moved = false;
    if (posted < total_reqs && posted - completed < window) {
      for (uint32_t i = 0; i < n; ++i) {
        const uint64_t seq = posted * n + i;
        data[i] = base + (seq % l.recv_slots) * size;
        sizes[i] = size;
        tags[i] = static_cast<int>(i);
        mhs[i] = s.recv_region().mhandle();
      }
      void* req = nullptr;
      check(s.api().irecv(s.recv_comm(), static_cast<int>(n), data, sizes, tags, mhs, &req), "irecv");
      if (req != nullptr) {
        ring[posted % window] = req;
        ++posted;
        moved = true;
        stall.progress();
      }
    }
    if (completed < posted) {
      int done = 0;
      std::fill(got, got + n, -1);
      check(s.api().test(ring[completed % window], &done, got), "test (recv)");
      if (done) {
        for (uint32_t i = 0; i < n; ++i) {
          const uint64_t seq = completed * n + i;
          check_message(result, payload, base + (seq % l.recv_slots) * size, size, got[i], seq, verify);
        }
        ++completed;
        moved = true;
        stall.progress();
        if (completed * n == plan.warmup) t0 = now_ns();
      }
    }
    if (!moved) stall.idle();
    stall.check(completed, total_reqs);
  }
  result.elapsed_ns = now_ns() - t0;
  return result;
}

// Posts one single-buffer irecv of `size` bytes into receive buffer `i % 2`, retrying while the plugin
// answers "not now".
void* post_recv(Session& s, Stall& stall, size_t size, uint64_t i) {
  void* mh = s.recv_region().mhandle();
  size_t rsize = size;
  int tag = 0;
  for (;;) {
    void* d = s.recv_region().data() + (i % 2) * size;
    void* req = nullptr;
    check(s.api().irecv(s.recv_comm(), 1, &d, &rsize, &tag, &mh, &req), "irecv");
    if (req != nullptr) return req;
    stall.idle();
    stall.check(0, 1);
  }
}

// Ping-pong as NCCL's proxy drives a connection: receives are posted ahead of the messages they take
// (NCCL keeps up to NCCL_STEPS posted), so a clear-to-send never waits on the round trip it belongs
// to. The client posts receive i+1 right after send i; the server keeps two receives posted. Either
// side's clear-to-send then travels while the other side works, and a round trip costs two one-way
// trips, as ib_write_lat's does. Receives alternate between two buffers; sends between two slots.
std::vector<double> ping(Session& s, const SizePlan& plan, const Payload& payload, bool verify,
                         PhaseResult* reply_check) {
  const size_t size = plan.size;
  const uint64_t total = uint64_t{plan.lat_warmup} + plan.lat_iters;
  std::vector<double> rtt_us;
  rtt_us.reserve(plan.lat_iters);
  Stall stall(s, "latency (client)");
  void* rreq = total > 0 ? post_recv(s, stall, size, 0) : nullptr;
  for (uint64_t i = 0; i < total; ++i) {
    unsigned char* sbuf = s.send_region().data() + (i % 2) * size;
    if (verify) Payload::stamp(sbuf, size, i);
    const uint64_t t_start = now_ns();
    void* sreq = post_send(s, stall, sbuf, size, 0, s.send_region().mhandle());
    void* next = i + 1 < total ? post_recv(s, stall, size, i + 1) : nullptr;
    int sent = -1;
    wait(s, stall, sreq, &sent, "test (send)");
    int got = -1;
    wait(s, stall, rreq, &got, "test (recv)");
    const uint64_t t_end = now_ns();
    if (i >= plan.lat_warmup) rtt_us.push_back(static_cast<double>(t_end - t_start) / 1000.0);
    check_message(*reply_check, payload, s.recv_region().data() + (i % 2) * size, size, got, i, verify);
    rreq = next;
    stall.progress();
  }
  return rtt_us;
}

PhaseResult pong(Session& s, const SizePlan& plan, const Payload& payload, bool verify) {
  const size_t size = plan.size;
  const uint64_t total = uint64_t{plan.lat_warmup} + plan.lat_iters;
  PhaseResult result;
  Stall stall(s, "latency (server)");
  void* rreq[2] = {nullptr, nullptr};
  for (uint64_t i = 0; i < std::min<uint64_t>(total, 2); ++i) rreq[i] = post_recv(s, stall, size, i);
  const uint64_t t0 = now_ns();
  for (uint64_t i = 0; i < total; ++i) {
    int got = -1;
    wait(s, stall, rreq[i % 2], &got, "test (recv)");
    check_message(result, payload, s.recv_region().data() + (i % 2) * size, size, got, i, verify);
    unsigned char* sbuf = s.send_region().data() + (i % 2) * size;
    if (verify) Payload::stamp(sbuf, size, i);
    void* sreq = post_send(s, stall, sbuf, size, 0, s.send_region().mhandle());
    rreq[i % 2] = i + 2 < total ? post_recv(s, stall, size, i + 2) : nullptr;
    int sent = -1;
    wait(s, stall, sreq, &sent, "test (send)");
    stall.progress();
  }
  result.elapsed_ns = now_ns() - t0;
  return result;
}

}  // namespace railscope::netbench
