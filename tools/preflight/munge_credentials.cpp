// SPDX-License-Identifier: Apache-2.0
// MUNGE through libmunge's C API (munge.h), resolved with dlopen.
#include "munge_credentials.h"

#include <dlfcn.h>
#include <munge.h>
#include <unistd.h>

#include <cstdlib>
#include <string_view>

namespace railscope::preflight {
namespace {

struct Libmunge {
  decltype(&munge_ctx_create) ctx_create = nullptr;
  decltype(&munge_ctx_destroy) ctx_destroy = nullptr;
  decltype(&munge_ctx_set) ctx_set = nullptr;
  decltype(&munge_encode) encode = nullptr;
  decltype(&munge_decode) decode = nullptr;
  decltype(&munge_strerror) strerror = nullptr;

  // The library stays loaded for the process's life: credentials are made until it exits.
  static const Libmunge* load(std::string* error) {
    static const Libmunge* const lib = []() -> const Libmunge* {
      void* h = ::dlopen("libmunge.so.2", RTLD_NOW | RTLD_LOCAL);
      if (h == nullptr) return nullptr;
      auto* l = new Libmunge;
      l->ctx_create = reinterpret_cast<decltype(ctx_create)>(::dlsym(h, "munge_ctx_create"));
      l->ctx_destroy = reinterpret_cast<decltype(ctx_destroy)>(::dlsym(h, "munge_ctx_destroy"));
      l->ctx_set = reinterpret_cast<decltype(ctx_set)>(::dlsym(h, "munge_ctx_set"));
      l->encode = reinterpret_cast<decltype(encode)>(::dlsym(h, "munge_encode"));
      l->decode = reinterpret_cast<decltype(decode)>(::dlsym(h, "munge_decode"));
      l->strerror = reinterpret_cast<decltype(strerror)>(::dlsym(h, "munge_strerror"));
      if (!l->ctx_create || !l->ctx_destroy || !l->ctx_set || !l->encode || !l->decode || !l->strerror) {
        delete l;
        return nullptr;
      }
      return l;
    }();
    if (lib == nullptr) *error = "libmunge.so.2 cannot be loaded (install MUNGE's library: libmunge2)";
    return lib;
  }
};

class Munge final : public CredentialService {
 public:
  Munge(const Libmunge& lib, std::string socket) : lib_(lib), socket_(std::move(socket)) {}

  const char* name() const override { return "munge"; }
  unsigned uid() const override { return static_cast<unsigned>(::geteuid()); }

  std::optional<std::string> seal(std::string_view payload, std::string* error) const override {
    Ctx ctx(lib_, socket_);
    if (!ctx.ok(error)) return std::nullopt;
    // Only this user (and root) may decode it: the key inside is for this job's processes alone.
    lib_.ctx_set(ctx.get(), MUNGE_OPT_UID_RESTRICTION, static_cast<uid_t>(::geteuid()));
    char* cred = nullptr;
    const munge_err_t e = lib_.encode(&cred, ctx.get(), payload.data(), static_cast<int>(payload.size()));
    if (e != EMUNGE_SUCCESS) {
      *error = std::string("munge: ") + lib_.strerror(e);
      std::free(cred);
      return std::nullopt;
    }
    std::string out(cred);
    std::free(cred);
    return out;
  }

  std::optional<OpenedCredential> open(std::string_view credential, std::string* error) const override {
    Ctx ctx(lib_, socket_);
    if (!ctx.ok(error)) return std::nullopt;
    const std::string text(credential);  // NUL-terminated for libmunge
    void* buf = nullptr;
    int len = 0;
    uid_t uid = 0;
    gid_t gid = 0;
    const munge_err_t e = lib_.decode(text.c_str(), ctx.get(), &buf, &len, &uid, &gid);
    if (e != EMUNGE_SUCCESS) {
      *error = std::string("munge: ") + lib_.strerror(e);
      std::free(buf);
      return std::nullopt;
    }
    OpenedCredential out;
    if (buf != nullptr && len > 0)
      out.payload.assign(static_cast<const char*>(buf), static_cast<size_t>(len));
    std::free(buf);
    out.uid = static_cast<unsigned>(uid);
    return out;
  }

 private:
  class Ctx {
   public:
    Ctx(const Libmunge& lib, const std::string& socket) : lib_(lib), ctx_(lib.ctx_create()) {
      if (ctx_ != nullptr && !socket.empty()) set_ = lib_.ctx_set(ctx_, MUNGE_OPT_SOCKET, socket.c_str());
    }
    ~Ctx() {
      if (ctx_ != nullptr) lib_.ctx_destroy(ctx_);
    }
    Ctx(const Ctx&) = delete;
    Ctx& operator=(const Ctx&) = delete;
    bool ok(std::string* error) const {
      if (ctx_ == nullptr) return *error = "munge: no memory for a context", false;
      if (set_ != EMUNGE_SUCCESS) return *error = std::string("munge: socket: ") + lib_.strerror(set_), false;
      return true;
    }
    munge_ctx_t get() const { return ctx_; }

   private:
    const Libmunge& lib_;
    munge_ctx_t ctx_;
    munge_err_t set_ = EMUNGE_SUCCESS;
  };

  const Libmunge& lib_;
  std::string socket_;
};

}  // namespace

std::shared_ptr<const CredentialService> open_munge(const std::string& socket, std::string* error) {
  const Libmunge* lib = Libmunge::load(error);
  if (lib == nullptr) return nullptr;
  auto m = std::make_shared<Munge>(*lib, socket);
  // One round trip now, so a node without munged says so before any rank connects.
  const auto cred = m->seal("railscope preflight probe", error);
  if (!cred) return nullptr;
  if (!m->open(*cred, error)) return nullptr;
  return m;
}

}  // namespace railscope::preflight
