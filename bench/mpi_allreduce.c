/* MPI_Allreduce (float32 sum) for bench/side_by_side.sh; the algorithm is whatever mpirun's MCA
 * parameters select (default decision rules, or e.g. ring forced).
 *
 * usage: mpi_allreduce SIZE_BYTES:ITERS:WARMUP[,...]
 * Rank 0 prints "SIZE_BYTES TIME_US" per plan entry: the slowest rank's mean time of one allreduce. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc != 2) {
        if (rank == 0) fprintf(stderr, "usage: mpi_allreduce SIZE:ITERS:WARMUP[,...]\n");
        MPI_Finalize();
        return 2;
    }
    char* plan = strdup(argv[1]);
    int rc = 0;
    for (char* item = strtok(plan, ","); item != NULL; item = strtok(NULL, ",")) {
        size_t bytes = 0;
        int iters = 0, warmup = 0;
        if (sscanf(item, "%zu:%d:%d", &bytes, &iters, &warmup) != 3 || iters < 1) {
            if (rank == 0) fprintf(stderr, "mpi_allreduce: bad plan entry '%s'\n", item);
            rc = 2;
            break;
        }
        size_t count = bytes / sizeof(float);
        if (count == 0) count = 1;
        float* send = malloc(count * sizeof(float));
        float* recv = malloc(count * sizeof(float));
        double total = 0;
        for (int it = 0; it < warmup + iters; ++it) {
            for (size_t i = 0; i < count; ++i)
                send[i] = (float)((i + (size_t)rank) % 7 + 1);
            MPI_Barrier(MPI_COMM_WORLD);
            const double t0 = MPI_Wtime();
            MPI_Allreduce(send, recv, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
            const double t1 = MPI_Wtime();
            if (it >= warmup) total += t1 - t0;
        }
        for (size_t i = 0; i < count; i += 997) {
            float want = 0;
            for (int r = 0; r < size; ++r)
                want += (float)((i + (size_t)r) % 7 + 1);
            if (recv[i] != want) {
                fprintf(stderr, "mpi_allreduce: rank %d wrong result at %zu\n", rank, i);
                MPI_Abort(MPI_COMM_WORLD, 1); /* peers would wait for this rank's next call */
            }
        }
        double mean = total / iters, slowest = 0;
        MPI_Reduce(&mean, &slowest, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            printf("%zu %.1f\n", count * sizeof(float), slowest * 1e6);
            fflush(stdout);
        }
        free(send);
        free(recv);
    }
    free(plan);
    MPI_Finalize();
    return rc;
}
