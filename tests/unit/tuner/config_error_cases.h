// SPDX-License-Identifier: Apache-2.0
// The config error cases, shared by the unit test (parser) and the ABI test (through init): each
// bad text, where the error must point ("line:column") and a substring of its message.
#pragma once

namespace railscope::tuner::test {

struct ErrorCase {
  const char* name;
  const char* text;
  const char* where;    // "line:column"
  const char* message;  // substring of the message
};

inline const ErrorCase kConfigErrorCases[] = {
    {"unknown_directive", "bogus coll=allreduce\n", "1:1", "unknown directive 'bogus'"},
    {"unknown_key", "rule coll=allreduce algo=ring speed=3\n", "1:31", "unknown key 'speed' for 'rule'"},
    {"unknown_key_measure",
     "measure coll=allreduce algo=ring proto=simple nodes=2 lat_us=5 busbw_gbps=9 x=1\n", "1:77",
     "unknown key 'x' for 'measure'"},
    {"unknown_key_node", "node nics=2 speed=100\n", "1:13", "unknown key 'speed' for 'node'"},
    {"bad_number", "rule coll=allreduce bytes=12x..64K algo=ring\n", "1:27", "'12x' is not a number"},
    {"bad_suffix", "rule coll=allreduce bytes=..64Q algo=ring\n", "1:27", "'64Q' is not a number"},
    {"number_too_large", "rule coll=allreduce bytes=..99999999999999999999 algo=ring\n", "1:27",
     "not a number"},
    {"empty_range", "rule coll=allreduce bytes=64K..1K algo=ring\n", "1:27", "range '64K..1K' is empty"},
    {"no_bounds", "rule coll=allreduce nodes=.. algo=ring\n", "1:27", "has no bounds"},
    {"overlap", "rule coll=allreduce bytes=0..1M algo=ring\nrule coll=allreduce bytes=512K..2M algo=tree\n",
     "2:21", "overlaps the rule at line 1"},
    {"overlap_coll_list",
     "rule coll=allgather,broadcast nodes=2..4 proto=ll\n\n# c\nrule coll=allgather,allreduce nodes=4.. "
     "proto=simple\n",
     "4:31", "overlaps the rule at line 1"},
    {"missing_equals", "rule coll=allreduce ring\n", "1:21", "expected key=value, found 'ring'"},
    {"empty_value", "rule coll=allreduce algo=\n", "1:26", "key 'algo' has no value"},
    {"duplicate_key", "rule coll=allreduce algo=ring algo=tree\n", "1:31", "key 'algo' given twice"},
    {"unknown_algo", "rule coll=allreduce algo=hypercube\n", "1:26", "unknown algorithm 'hypercube'"},
    {"unknown_proto", "rule coll=allreduce proto=ll64\n", "1:27", "unknown protocol 'll64'"},
    {"unknown_coll_in_list", "rule coll=allreduce,alltoall algo=ring\n", "1:21",
     "unknown collective 'alltoall'"},
    {"nvls_needs_simple", "rule coll=allreduce algo=nvls proto=ll\n", "1:1", "nvls runs only with simple"},
    {"pins_nothing", "rule coll=allreduce bytes=0..1K\n", "1:1", "rule pins nothing"},
    {"no_coll", "rule algo=ring\n", "1:1", "rule needs coll="},
    {"channels_range", "rule coll=allreduce channels=65\n", "1:30", "channels: 65 is outside [1, 64]"},
    {"channels_not_int", "rule coll=allreduce channels=many\n", "1:30", "'many' is not an integer"},
    {"regbuff_range", "rule coll=allreduce regbuff=2 algo=ring\n", "1:29", "regbuff: 2 is outside [0, 1]"},
    {"chunk_zero", "rule coll=allreduce chunk=0\n", "1:27", "chunk: must be greater than 0"},
    {"chunk_with_pipeops", "rule coll=allreduce pipeops=2.. chunk=1M\n", "1:1", "chunk= cannot be combined"},
    {"measure_missing", "measure coll=allreduce algo=ring proto=simple nodes=2\n", "1:1", "measure needs"},
    {"measure_bad_decimal",
     "measure coll=allreduce algo=ring proto=simple nodes=2 lat_us=fast busbw_gbps=9\n", "1:62",
     "lat_us: 'fast' is not a decimal number"},
    {"measure_negative", "measure coll=allreduce algo=ring proto=simple nodes=2 lat_us=5 busbw_gbps=-9\n",
     "1:75", "must be greater than 0"},
    {"measure_twice",
     "measure coll=allreduce algo=ring proto=simple nodes=2 lat_us=5 busbw_gbps=9\n"
     "measure coll=allreduce algo=ring proto=simple nodes=2 lat_us=6 busbw_gbps=8\n",
     "2:1", "already given at line 1"},
    {"node_layer", "node link_layer=token-ring\n", "1:17", "unknown link_layer 'token-ring'"},
    {"node_nics_range", "node nics=100\n", "1:11", "nics: 100 is outside [0, 64]"},
    {"node_intra", "node intra=infinityfabric\n", "1:12", "unknown intra link 'infinityfabric'"},
    // A subnormal bandwidth made every cost NaN ("chose tree/ll -nan us").
    {"node_intra_gbps_subnormal", "node intra_gbps=1e-320\n", "1:17", "'1e-320' is not a usable number"},
    {"node_nic_gbps_huge", "node nic_gbps=1e300\n", "1:15", "'1e300' is outside [0.001, 100000]"},
    {"node_nic_gbps_tiny", "node nic_gbps=1e-9\n", "1:15", "'1e-9' is outside [0.001, 100000]"},
    {"measure_lat_tiny", "measure coll=allreduce algo=ring proto=simple nodes=2 lat_us=1e-9 busbw_gbps=9\n",
     "1:62", "lat_us: '1e-9' is outside [0.001, 1e+08]"},
    {"measure_busbw_inf", "measure coll=allreduce algo=ring proto=simple nodes=2 lat_us=5 busbw_gbps=inf\n",
     "1:75", "busbw_gbps: 'inf' is not a usable number"},
    {"measure_busbw_overflow",
     "measure coll=allreduce algo=ring proto=simple nodes=2 lat_us=5 busbw_gbps=1e999\n", "1:75",
     "'1e999' is not a usable number"},
    {"csv_field_count", "allreduce,0,65536,tree,ll,-1,2\n", "1:1", "has 7 fields; expected 8 to 10"},
    {"csv_too_many_fields", "allreduce,0,65536,tree,ll,-1,2,-1,-1,-1,7\n", "1:1", "has 11 fields"},
    {"csv_bad_min", "allreduce,zero,65536,tree,ll,-1,2,-1\n", "1:11", "min_bytes: 'zero' is not a number"},
    {"csv_bad_max", "allreduce,0,6.5e4,tree,ll,-1,2,-1\n", "1:13", "max_bytes: '6.5e4' is not a number"},
    {"csv_min_above_max", "broadcast,100,10,ring,simple,-1,-1,-1\n", "1:11", "size range 100..10 is empty"},
    {"csv_algo", "allgather,0,100,star,simple,-1,-1,-1\n", "1:17", "unknown algorithm 'star'"},
    {"csv_proto", "allgather,0,100,ring,fast,-1,-1,-1\n", "1:22", "unknown protocol 'fast'"},
    {"csv_nvls_ll", "allreduce,0,100,nvls,ll,-1,-1,-1\n", "1:22", "nvls runs only with simple"},
    {"csv_channels", "allreduce,0,100,ring,ll,0,-1,-1\n", "1:25", "channels: 0 is outside [1, 64]"},
    {"csv_nnodes", "allreduce,0,100,ring,ll,-1,x,-1\n", "1:28", "nNodes: 'x' is not an integer"},
    {"csv_nranks", "allreduce,0,100,ring,ll,-1,2,0\n", "1:30", "nRanks: 0 is outside"},
    {"csv_pipeops", "allreduce,0,100,ring,ll,-1,2,16,-5\n", "1:33", "numPipeOps: -5 is outside"},
    {"csv_regbuff", "allreduce,0,100,ring,ll,-1,2,16,-1,3\n", "1:36", "regBuff: 3 is outside [0, 1]"},
    {"point_missing_samples",
     "point coll=allreduce bytes=1M algo=ring proto=ll ranks=16 nodes=2 busbw_GBps=9\n", "1:1",
     "point needs coll=, bytes=, algo=, proto=, ranks=, nodes=, busbw_GBps= and samples="},
    {"point_bad_busbw",
     "point coll=allreduce bytes=1M algo=ring proto=ll ranks=16 nodes=2 busbw_GBps=nan samples=3\n", "1:78",
     "busbw_GBps"},
    {"point_bad_bytes",
     "point coll=allreduce bytes=1Q algo=ring proto=ll ranks=16 nodes=2 busbw_GBps=9 samples=3\n", "1:28",
     "bytes: '1Q' is not a number"},
    {"point_nvls_ll",
     "point coll=allreduce bytes=1M algo=nvls proto=ll ranks=16 nodes=2 busbw_GBps=9 samples=3\n", "1:1",
     "nvls runs only with simple"},
    {"point_twice",
     "point coll=allreduce bytes=1M algo=ring proto=ll ranks=16 nodes=2 busbw_GBps=9 samples=3\n"
     "point coll=allreduce bytes=1M algo=ring proto=ll ranks=16 nodes=2 busbw_GBps=8 samples=3\n",
     "2:1", "already given at line 1"},
    {"point_more_nodes_than_ranks",
     "point coll=allreduce bytes=1M algo=ring proto=ll ranks=2 nodes=4 busbw_GBps=9 samples=3\n", "1:1",
     "nodes=4 is more than ranks=2"},
    {"cluster_twice", "cluster nodes=2 ranks_per_node=8\ncluster nodes=2 ranks_per_node=8\n", "2:1",
     "a second cluster line (the first is at line 1)"},
    {"cluster_needs_shape", "cluster gpu=H100 nodes=2\n", "1:1", "cluster needs nodes= and ranks_per_node="},
    {"cluster_bad_nic_gbit", "cluster nodes=2 ranks_per_node=8 nic_gbit=-4\n", "1:43", "nic_gbit"},
    {"cluster_bad_rail_GBps", "cluster nodes=2 ranks_per_node=8 rail_GBps=4x6\n", "1:44",
     "rail_GBps: '4x6' is not a decimal number"},
};

}  // namespace railscope::tuner::test
