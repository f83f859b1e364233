// SPDX-License-Identifier: Apache-2.0
// A launcher's credentials as the job's secret: where no token is shared, each rank proves that it runs
// as the job's user on a node of the cluster with a credential the cluster's own authentication service
// made (Slurm's MUNGE: https://dun.github.io/munge/), and the credential carries a fresh key for that
// one connection. The service is an interface so that frame_auth.cpp stays pure (the fuzzer and the
// unit tests give their own); munge_credentials.h is MUNGE's.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace railscope::preflight {

struct OpenedCredential {
  std::string payload;
  unsigned uid = 0;  // the user the credential's maker ran as, as the service vouches
};

class CredentialService {
 public:
  virtual ~CredentialService() = default;
  // "munge": named in the verdict and in errors.
  virtual const char* name() const = 0;
  // A credential for `payload` that only this user (or root) can open; nullopt with *error when the
  // service cannot be reached.
  virtual std::optional<std::string> seal(std::string_view payload, std::string* error) const = 0;
  // The payload and maker of a credential; nullopt with *error for one that is forged, expired,
  // replayed or not for this user.
  virtual std::optional<OpenedCredential> open(std::string_view credential, std::string* error) const = 0;
  // The user whose credentials this process accepts: its own.
  virtual unsigned uid() const = 0;
};

}  // namespace railscope::preflight
