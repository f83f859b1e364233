# The TCP engine (RAILSCOPE_TRANSPORT=tcp|auto), included from plugin/net/CMakeLists.txt. It reuses
# the verbs engine's statistics and request pool (plugin/net/verbs/stats.h, request_pool.h).
railscope_add_internal_library(railscope_net_tcp
  SOURCES
    tcp/connection.cpp
    tcp/handshake.cpp
    tcp/interfaces.cpp
    tcp/lanes.cpp
    tcp/options.cpp
    tcp/recv_comm.cpp
    tcp/send_comm.cpp
    tcp/socket.cpp
    tcp/tcp_engine.cpp
    tcp/wire.cpp
    tcp/zerocopy.cpp
  PUBLIC_LIBS railscope_core railscope_net_verbs Threads::Threads)
