/* The per-syscall limit of file creation: a bare loop of open(O_CREAT|O_EXCL|O_WRONLY) + close
 * of N new, empty files in one directory, as `touch` does and as `fsbench metadata --ops create`
 * times it. No latency recording; the clock is read at the start and the end. The files are
 * removed afterwards (untimed). Prints "<files/s>". Used by metadata-vs-fsmark.sh. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s DIR N\n", argv[0]);
        return 2;
    }
    long n = strtol(argv[2], NULL, 10);
    int dir = open(argv[1], O_RDONLY | O_DIRECTORY);
    if (dir < 0) { perror("open DIR"); return 1; }
    /* Names made before the clock starts, as fsbench makes them. */
    char (*names)[32] = malloc(n * sizeof *names);
    if (!names) return 1;
    for (long i = 0; i < n; i++) snprintf(names[i], sizeof names[i], "c-%ld", i);
    double start = now();
    for (long i = 0; i < n; i++) {
        int fd = openat(dir, names[i], O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
        if (fd < 0) { perror("openat"); return 1; }
        close(fd);
    }
    double elapsed = now() - start;
    for (long i = 0; i < n; i++) unlinkat(dir, names[i], 0);
    printf("%.0f\n", n / elapsed);
    return 0;
}
