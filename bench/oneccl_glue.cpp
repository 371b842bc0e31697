/*
 * oneccl_glue.cpp — oneCCL under bench/mpi_coll_bench.c's timing harness (see
 * oneccl_glue.h).  The communicator is made the way oneCCL's MPI examples make it: rank 0
 * creates the main key-value store, its address goes to the others by MPI_Bcast.  Calls
 * are host (CPU) buffers, float64 sum, root 0, waited on at once; allgather is
 * ccl::allgatherv with equal counts (its algorithms are chosen by CCL_ALLGATHERV).  Built
 * by bench/compare against the CPU-only static libccl.a of the oneccl wheel (the shared
 * libccl.so is the SYCL build, which needs a GPU runtime) and run with
 * CCL_ATL_TRANSPORT=mpi over Intel MPI.
 */
#include "oneccl_glue.h"

#include <array>
#include <cstdio>
#include <exception>
#include <memory>
#include <optional>
#include <vector>

#include <mpi.h>
#include <oneapi/ccl.hpp>

namespace {
std::optional<ccl::communicator> comm;
std::vector<size_t> recv_counts;   // allgatherv: count from every rank

ccl::event start(int coll, double *in, double *out, size_t count) {
    switch (coll) {
    case GLUE_ALLREDUCE: return ccl::allreduce(in, out, count, ccl::reduction::sum, *comm);
    case GLUE_REDUCE: return ccl::reduce(in, out, count, ccl::reduction::sum, 0, *comm);
    case GLUE_BCAST: return ccl::broadcast(in, count, 0, *comm);
    case GLUE_ALLGATHER:
        if (recv_counts.empty() || recv_counts[0] != count)
            recv_counts.assign((size_t)comm->size(), count);
        return ccl::allgatherv(in, count, out, recv_counts, *comm);
    case GLUE_REDUCE_SCATTER:
        return ccl::reduce_scatter(in, out, count, ccl::reduction::sum, *comm);
    default: return ccl::alltoall(in, out, count, *comm);
    }
}
}

extern "C" int ccl_glue_init(char *err, size_t n) {
    try {
        int rank = 0, size = 0;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        MPI_Comm_size(MPI_COMM_WORLD, &size);
        ccl::init();
        ccl::shared_ptr_class<ccl::kvs> kvs;
        ccl::kvs::address_type address;
        if (rank == 0) {
            kvs = ccl::create_main_kvs();
            address = kvs->get_address();
        }
        MPI_Bcast(address.data(), (int)address.size(), MPI_BYTE, 0, MPI_COMM_WORLD);
        if (rank != 0)
            kvs = ccl::create_kvs(address);
        comm.emplace(ccl::create_communicator(size, rank, kvs));
        return 0;
    } catch (const std::exception &e) {
        std::snprintf(err, n, "oneCCL initialisation failed: %s", e.what());
        return -1;
    }
}

extern "C" int ccl_glue_call(int coll, double *in, double *out, size_t count, char *err,
                             size_t n) {
    try {
        start(coll, in, out, count).wait();
        return 0;
    } catch (const std::exception &e) {
        std::snprintf(err, n, "oneCCL call failed: %s", e.what());
        return -1;
    }
}

extern "C" void ccl_glue_version(char *text, size_t n) {
    ccl::library_version v = ccl::get_library_version();
    std::snprintf(text, n, "oneCCL %s", v.full ? v.full : "(unknown version)");
}

extern "C" void ccl_glue_finalize(void) {
    comm.reset();
}
