// opt's control block: slots of the long long array ctrl[] that the kernels and the host
// (sssp_gpu/methods/opt.py parses the #defines below) share. One definition for both sides.
#pragma once

#define C_BARRIER 0   // grid barrier: a monotonic arrival counter
#define C_NEAR 1      // 3 slots: size of the near queue filled for round r is slot r % 3
#define C_FAR 4       // 2 slots: size of far pile 0 / 1
#define C_FARMIN 6    // 2 slots: lower bound on the distances in far pile 0 / 1
#define C_CHUNK 8     // 3 slots: hub chunks found while expanding round r: slot r % 3
#define C_EDGES 11    // edges relaxed
#define C_SCANNED 12  // far-pile entries examined by splits
#define C_ROUNDS 13
#define C_SPLITS 14
#define C_BARRIERS 15
#define C_ERROR 16    // 1: round guard hit
#define C_MODE 17     // phase driver: what the next launches do (MODE_*)
#define C_R 18        // phase driver: the current round
#define C_FCUR 19     // phase driver: the far pile in use
#define C_T 20        // the near/far threshold (the host sets the first one)
#define C_TICKET 21   // phase driver: blocks finished with this launch
#define C_SPLIT_NS 22 // nanoseconds spent in far-pile splits (the "filtering" of opt)
#define C_TSTAMP 23   // phase driver: when the last phase ended (global timer, ns)
#define C_FMIN 24     // 3 slots: least distance in round r's near queue (pull rounds): slot r % 3
#define C_PULLS 27    // rounds run bottom-up (pull)
#define C_SPREV 28    // phase driver: the previous round's near-queue size
#define C_TSLOW 29    // 3 slots, opt -tile: round r's slowest activation so far, ns: slot r % 3
#define C_TSTEPS 32   // opt -tile: worklist steps over all tile activations
#define C_TACTIVE 33  // opt -tile: tile activations
#define C_TLOAD 34    // opt -tile: ns in activations' loads and edge staging (sum over activations)
#define C_TSTEPNS 35  // opt -tile: ns in activations' steps (sum)
#define C_TWRITE 36   // opt -tile: ns in activations' write-back and queueing (sum)
#define C_TCRIT 38    // opt -tile: sum over rounds of the slowest activation, ns
#define C_SIZE 40

#define MODE_EXPAND 0
#define MODE_SPLIT 1
#define MODE_DONE 2
