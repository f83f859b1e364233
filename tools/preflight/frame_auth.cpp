// SPDX-License-Identifier: Apache-2.0
// The job's key and each connection's sealed frames (see frame_auth.h). The MAC, the random nonces and
// the constant-time comparison are OpenSSL's libcrypto.
#include "frame_auth.h"

#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace railscope::preflight {
namespace {

constexpr std::string_view kKeyLabel = "railscope.preflight/2 job key";
constexpr std::string_view kTagLabel = "railscope.preflight/2 frame";
constexpr std::string_view kCredentialLabel = "railscope.preflight/2 connection key\n";
// Hello: mode, nonce, and from a rank with a credential service its credential.
constexpr size_t kHelloBytes = 1 + kNonceBytes;
enum HelloMode : char { kNoSecret = 0, kToken = 1, kCredential = 2 };
// The credential's payload: label, rank (u32), the rank's hello nonce, the connection's key, job id.
constexpr size_t kCredentialFixedBytes = kCredentialLabel.size() + 4 + kNonceBytes + 32;

char mode_of(const JobSecret& s) { return s.token ? kToken : s.credentials ? kCredential : kNoSecret; }
const char* mode_name(char m) {
  return m == kToken ? "a job token" : m == kCredential ? "launcher credentials (MUNGE)" : "no job secret";
}

void put32(char* p, uint32_t v) {
  for (int i = 3; i >= 0; --i, v >>= 8) p[i] = static_cast<char>(v & 0xff);
}
uint32_t get32(std::string_view s, size_t at) {
  uint32_t v = 0;
  for (size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(s[at + i]);
  return v;
}

bool is_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

std::string hmac(const JobKey& key, std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  if (!HMAC(EVP_sha256(), key.bytes.data(), static_cast<int>(key.bytes.size()),
            reinterpret_cast<const unsigned char*>(data.data()), data.size(), out, &n))
    return {};
  return std::string(reinterpret_cast<const char*>(out), n);
}

}  // namespace

std::optional<JobKey> key_from_token(std::string_view token, std::string* error) {
  while (!token.empty() && is_space(token.back())) token.remove_suffix(1);
  if (token.size() < kMinTokenBytes || token.size() > kMaxTokenBytes) {
    *error = "the job's token is " + std::to_string(token.size()) + " bytes; it must be " +
             std::to_string(kMinTokenBytes) + ".." + std::to_string(kMaxTokenBytes) +
             " (e.g. `openssl rand -hex 32`)";
    return std::nullopt;
  }
  JobKey token_key;  // HMAC's key is the token itself; any length is fine for HMAC
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  if (!HMAC(EVP_sha256(), token.data(), static_cast<int>(token.size()),
            reinterpret_cast<const unsigned char*>(kKeyLabel.data()), kKeyLabel.size(), out, &n) ||
      n != token_key.bytes.size()) {
    *error = "HMAC-SHA256 is not available from libcrypto";
    return std::nullopt;
  }
  std::memcpy(token_key.bytes.data(), out, n);
  OPENSSL_cleanse(out, sizeof out);
  return token_key;
}

std::optional<JobKey> key_from_file(const std::string& path, std::string* error) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    *error = "--token-file " + path + ": " + std::strerror(errno);
    return std::nullopt;
  }
  struct stat st {};
  std::string text;
  const auto fail = [&](const std::string& why) {
    ::close(fd);
    OPENSSL_cleanse(text.data(), text.size());
    *error = "--token-file " + path + ": " + why;
    return std::nullopt;
  };
  if (::fstat(fd, &st) != 0) return fail(std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return fail("not a regular file");
  if (st.st_uid != ::geteuid() && st.st_uid != 0)
    return fail("owned by uid " + std::to_string(st.st_uid) + ", not by this user or root");
  if (st.st_mode & 077) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return fail(std::string("mode ") + mode +
                " lets group or others read or write the job's secret: chmod 600 it (a Kubernetes "
                "Secret volume: defaultMode: 0400)");
  }
  if (st.st_size > static_cast<off_t>(kMaxTokenBytes + 2))
    return fail("larger than " + std::to_string(kMaxTokenBytes) + " bytes");
  text.resize(kMaxTokenBytes + 3);
  size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return fail(std::strerror(errno));
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  ::close(fd);
  auto key = key_from_token(std::string_view(text.data(), got), error);
  OPENSSL_cleanse(text.data(), text.size());
  if (!key) *error = "--token-file " + path + ": " + *error;
  return key;
}

FrameAuth::FrameAuth(JobSecret secret, bool at_rank0, int rank)
    : secret_(std::move(secret)), key_(secret_.token), at_rank0_(at_rank0), rank_(rank) {
  ok_ = RAND_bytes(nonce_.data(), static_cast<int>(nonce_.size())) == 1;
  if (!ok_) error_ = "no random bytes from libcrypto";
  make_credential();
}

FrameAuth::FrameAuth(JobSecret secret, bool at_rank0, int rank,
                     const std::array<unsigned char, kNonceBytes>& nonce)
    : secret_(std::move(secret)), key_(secret_.token), at_rank0_(at_rank0), rank_(rank), nonce_(nonce) {
  make_credential();
}

// At a rank with a credential service: a fresh key for this connection, sealed with the rank and this
// hello's nonce so that rank 0 takes it for this rank and this connection only.
void FrameAuth::make_credential() {
  if (!ok_ || at_rank0_ || !secret_.credentials) return;
  JobKey k;
  if (RAND_bytes(k.bytes.data(), static_cast<int>(k.bytes.size())) != 1) {
    ok_ = false;
    error_ = "no random bytes from libcrypto";
    return;
  }
  std::string payload(kCredentialLabel);
  payload.resize(payload.size() + 4);
  put32(payload.data() + kCredentialLabel.size(), static_cast<uint32_t>(rank_));
  payload.append(reinterpret_cast<const char*>(nonce_.data()), nonce_.size());
  payload.append(reinterpret_cast<const char*>(k.bytes.data()), k.bytes.size());
  payload += secret_.job.substr(0, kMaxJobIdBytes);
  auto cred = secret_.credentials->seal(payload, &error_);
  OPENSSL_cleanse(payload.data(), payload.size());
  if (!cred || cred->empty() || cred->size() > kMaxCredentialBytes) {
    ok_ = false;
    if (cred) error_ = "a credential of " + std::to_string(cred->size()) + " bytes";
    return;
  }
  credential_ = std::move(*cred);
  key_ = k;
}

// At rank 0: the rank's credential opened by the service, made by this user for this job, for the
// nonce of the hello that carried it; its key becomes the connection's and its rank binds it.
bool FrameAuth::open_credential(std::string_view credential,
                                const std::array<unsigned char, kNonceBytes>& nonce, std::string* error) {
  std::string why;
  auto opened = secret_.credentials->open(credential, &why);
  if (!opened) return *error = "the rank's credential was refused (" + why + ")", false;
  std::string p = std::move(opened->payload);
  const auto fail = [&](std::string why_not) {
    OPENSSL_cleanse(p.data(), p.size());
    *error = std::move(why_not);
    return false;
  };
  if (opened->uid != secret_.credentials->uid())
    return fail("the rank's credential was made by uid " + std::to_string(opened->uid) +
                ", not by this job's user (uid " + std::to_string(secret_.credentials->uid()) + ")");
  if (p.size() < kCredentialFixedBytes || p.size() > kCredentialFixedBytes + kMaxJobIdBytes ||
      p.compare(0, kCredentialLabel.size(), kCredentialLabel) != 0)
    return fail("the rank's credential is not a railscope preflight key");
  size_t at = kCredentialLabel.size();
  const uint32_t rank = get32(p, at);
  at += 4;
  if (CRYPTO_memcmp(p.data() + at, nonce.data(), nonce.size()) != 0)
    return fail("the rank's credential was made for another connection (replayed)");
  at += kNonceBytes;
  JobKey k;
  std::memcpy(k.bytes.data(), p.data() + at, k.bytes.size());
  at += k.bytes.size();
  const std::string job = p.substr(at);
  if (job != secret_.job.substr(0, kMaxJobIdBytes))
    return fail("the rank's credential is for job '" + job + "', not for this job ('" + secret_.job + "')");
  if (rank < 1 || rank > 0x7fffffff) return fail("the rank's credential names rank " + std::to_string(rank));
  OPENSSL_cleanse(p.data(), p.size());
  key_ = k;
  rank_ = static_cast<int>(rank);
  return true;
}

std::string FrameAuth::tag(bool from_rank0, uint64_t seq, std::string_view header,
                           std::string_view payload) const {
  const auto& rank0_nonce = at_rank0_ ? nonce_ : *peer_nonce_;
  const auto& rank_nonce = at_rank0_ ? *peer_nonce_ : nonce_;
  std::string data(kTagLabel);
  data += from_rank0 ? '\x02' : '\x01';
  for (int i = 7; i >= 0; --i) data += static_cast<char>((seq >> (8 * i)) & 0xff);
  data.append(reinterpret_cast<const char*>(rank0_nonce.data()), rank0_nonce.size());
  data.append(reinterpret_cast<const char*>(rank_nonce.data()), rank_nonce.size());
  data += header;
  data += payload;
  return hmac(*key_, data);
}

std::string FrameAuth::seal(FrameType type, std::string_view payload) {
  const bool hello = type == FrameType::Hello;
  if (!ok_ || payload.size() > kMaxFrame || (hello && hello_sent_) ||
      (!hello && (!hello_sent_ || !handshake_done() || rank_ < 0)))
    return {};
  std::string out(kHeaderBytes, '\0');
  put32(out.data(), kFrameMagic);
  put32(out.data() + 4, static_cast<uint32_t>(type));
  put32(out.data() + 8, static_cast<uint32_t>(rank_ < 0 ? 0 : rank_));
  if (hello) {
    hello_sent_ = true;
    std::string body(1, mode_of(secret_));
    body.append(reinterpret_cast<const char*>(nonce_.data()), nonce_.size());
    body += credential_;
    put32(out.data() + 12, static_cast<uint32_t>(body.size()));
    return out + body;
  }
  put32(out.data() + 12, static_cast<uint32_t>(payload.size()));
  const std::string header = out;
  out += payload;
  if (key_) {
    const std::string t = tag(at_rank0_, send_seq_, header, payload);
    if (t.size() != kTagBytes) return {};
    out += t;
  }
  ++send_seq_;
  return out;
}

std::optional<size_t> FrameAuth::body_size(std::string_view header, std::string* error) const {
  if (header.size() != kHeaderBytes) return *error = "short header", std::nullopt;
  const uint32_t magic = get32(header, 0);
  if (magic == kOldFrameMagic || magic == kPriorFrameMagic)
    return *error = "an older railscope preflight (another frame format): run one version on every rank",
           std::nullopt;
  if (magic != kFrameMagic) return *error = "not a railscope preflight peer (bad magic)", std::nullopt;
  const uint32_t type = get32(header, 4);
  if (type < static_cast<uint32_t>(FrameType::Report) || type > static_cast<uint32_t>(FrameType::Later))
    return *error = "unknown message type " + std::to_string(type), std::nullopt;
  const uint32_t length = get32(header, 12);
  if (length > kMaxFrame)
    return *error = "message of " + std::to_string(length) + " bytes is over the cap of " +
                    std::to_string(kMaxFrame),
           std::nullopt;
  const bool tagged = key_.has_value() && static_cast<FrameType>(type) != FrameType::Hello;
  return size_t{length} + (tagged ? kTagBytes : 0);
}

std::optional<Frame> FrameAuth::open(std::string_view header, std::string_view body, std::string* error) {
  const auto size = body_size(header, error);
  if (!size) return std::nullopt;
  if (body.size() != *size) return *error = "frame body of the wrong size", std::nullopt;
  Frame f;
  f.type = static_cast<FrameType>(get32(header, 4));
  const uint32_t rank = get32(header, 8);
  if (f.type == FrameType::Hello) {
    if (handshake_done()) return *error = "a second hello on one connection", std::nullopt;
    if (body.size() < kHelloBytes) return *error = "a hello of the wrong size", std::nullopt;
    const char peer_mode = body[0];
    if (peer_mode != kNoSecret && peer_mode != kToken && peer_mode != kCredential)
      return *error = "a hello of an unknown mode", std::nullopt;
    // Only a rank's hello under a credential service carries more: its credential.
    const size_t extra = body.size() - kHelloBytes;
    if ((peer_mode == kCredential && at_rank0_) ? extra == 0 || extra > kMaxCredentialBytes : extra != 0)
      return *error = "a hello of the wrong size", std::nullopt;
    const char mine = mode_of(secret_);
    const std::string peer = at_rank0_ ? "the peer" : "rank 0";
    if (peer_mode != kNoSecret && mine == kNoSecret)
      return *error = std::string(at_rank0_ ? "the rank" : "rank 0") +
                      " holds a job secret and this process has none (give --token-file FILE or set "
                      "RAILSCOPE_PREFLIGHT_TOKEN, as on the other ranks" +
                      (peer_mode == kCredential ? "; or make MUNGE work on this node" : "") + ")",
             std::nullopt;
    if (peer_mode == kNoSecret && mine != kNoSecret)
      return *error = peer + " has no job secret (unauthenticated) and this process has one: refused",
             std::nullopt;
    if (peer_mode != mine)
      return *error = peer + " authenticates with " + mode_name(peer_mode) + " and this process with " +
                      mode_name(mine) + ": give every rank the same (a token overrides MUNGE)",
             std::nullopt;
    std::array<unsigned char, kNonceBytes> n;
    std::memcpy(n.data(), body.data() + 1, n.size());
    if (peer_mode == kCredential && at_rank0_ && !open_credential(body.substr(kHelloBytes), n, error))
      return std::nullopt;
    peer_nonce_ = n;
    f.rank = static_cast<int>(rank > 0x7fffffff ? 0 : rank);
    f.payload.assign(body);
    return f;
  }
  if (!handshake_done()) return *error = "a message before the hello", std::nullopt;
  const std::string_view payload = body.substr(0, body.size() - (key_ ? kTagBytes : 0));
  // At rank 0 the first sealed frame binds the connection to the rank it claims; the tag covers it.
  const int claimed = rank > 0x7fffffff ? -1 : static_cast<int>(rank);
  if (rank_ >= 0 && claimed != rank_)
    return *error = "a frame for rank " + std::to_string(rank) + " on the connection of rank " +
                    std::to_string(rank_),
           std::nullopt;
  if (claimed < 0) return *error = "rank " + std::to_string(rank) + " is out of range", std::nullopt;
  if (key_) {
    const std::string want = tag(!at_rank0_, recv_seq_, header, payload);
    if (want.size() != kTagBytes || CRYPTO_memcmp(want.data(), body.data() + payload.size(), kTagBytes) != 0)
      return *error =
                 "the frame's authentication code does not match (another job's secret, or a forged, "
                 "replayed or modified frame)",
             std::nullopt;
  }
  ++recv_seq_;
  rank_ = claimed;
  f.rank = claimed;
  f.payload.assign(payload);
  return f;
}

}  // namespace railscope::preflight
