# SPDX-License-Identifier: Apache-2.0
# The TCP engine (RAILSCOPE_TRANSPORT=tcp|auto), included from plugin/net/CMakeLists.txt. It stands
# alone over plugin/net/common/ (railscope_net_common) and never links the verbs engine.
railscope_add_internal_library(railscope_net_tcp
  SOURCES
    tcp/connection.cpp
    tcp/handshake.cpp
    tcp/interfaces.cpp
    tcp/lanes.cpp
    tcp/options.cpp
    tcp/recv_comm.cpp
    tcp/send_comm.cpp
    tcp/tcp_engine.cpp
    tcp/wire.cpp
    tcp/zerocopy.cpp
  PUBLIC_LIBS railscope_net_common railscope_core railscope_node Threads::Threads)
