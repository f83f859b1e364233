#include "plugin/net/engine_factory.h"

#include "plugin/net/verbs/verbs_engine.h"

namespace railscope::net {

std::unique_ptr<Engine> make_engine(const InitArgs& args, Status* status) {
  // RAILSCOPE_TRANSPORT (auto|verbs|tcp) selects here once the TCP engine exists.
  return verbs::VerbsEngine::create(args, status);
}

}  // namespace railscope::net
