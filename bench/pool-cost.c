/* What the data pool costs a bare pwrite loop: 4 KiB pwrites over an existing file, sequential,
 * wrapping at its end, for SECONDS, from one buffer (POOL_BYTES 0) or from a rotating pool of
 * POOL_BYTES random bytes whose every 4 KiB block gets a 16-byte stamp first, as fsbench's data
 * source serves them (crates/workload/src/data.rs). Prints "<MiB/s>".
 * usage: pool-cost FILE POOL_BYTES SECONDS */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s FILE POOL_BYTES SECONDS\n", argv[0]);
        return 2;
    }
    const size_t bs = 4096;
    size_t pool = strtoul(argv[2], NULL, 10);
    double seconds = atof(argv[3]);
    int fd = open(argv[1], O_WRONLY);
    if (fd < 0) { perror("open"); return 1; }
    struct stat st;
    fstat(fd, &st);
    off_t size = st.st_size - st.st_size % bs;
    if (size <= 0) { fprintf(stderr, "the file is empty\n"); return 1; }
    char *p;
    if (posix_memalign((void **)&p, 4096, pool + bs)) return 1;
    FILE *urandom = fopen("/dev/urandom", "r");
    if (!urandom || fread(p, 1, pool + bs, urandom) != pool + bs) return 1;
    fclose(urandom);
    uint64_t ops = 0, counter = 0;
    off_t off = 0;
    size_t pos = 0;
    double start = now(), end;
    for (;;) {
        for (int i = 0; i < 4096; i++) {
            char *b = p + pos;
            if (pool) {
                ((uint64_t *)b)[0] = counter++;
                ((uint64_t *)b)[1] = 0x5eed;
                pos += bs;
                if (pos >= pool) pos = 0;
            }
            if (pwrite(fd, b, bs, off) != (ssize_t)bs) { perror("pwrite"); return 1; }
            off += bs;
            if (off >= size) off = 0;
        }
        ops += 4096;
        end = now();
        if (end - start >= seconds) break;
    }
    printf("%.0f\n", ops * (double)bs / 1048576.0 / (end - start));
    return 0;
}
