/* The per-syscall limit: a bare loop of pread or pwrite over an existing file, sequential,
 * wrapping at the end, for a given number of seconds. No latency recording; the clock is read
 * once every 4096 operations. The buffer sits OFFSET bytes past a page boundary (default 16,
 * where malloc'd memory lands): how fast the kernel copies into or out of it depends on that
 * offset, differently on every CPU, so matrix-vs-fio.sh runs every offset fsbench may choose
 * and keeps the best as the limit.
 * With FRESH=1 in the environment (writes only) the file is first made anew, untimed, as
 * fsbench's pwrite phase leaves it before its re-pwrite: unlinked, then written whole with
 * BLOCK_BYTES pwrites from a 256 KiB pool of random bytes; the timed loop starts right after.
 * A file written moments ago is rewritten more slowly than one the kernel has settled
 * (bench/README.md), so this is the loop in the state fsbench's re-pwrite is measured in.
 * With THREADS=1 (any I/O) a second thread runs beside the loop, waking every 10 ms as fsbench's
 * watchdog does: a process with more than one thread pays for each call a reference taken and
 * dropped on the file (the kernel skips it only while the descriptor table is the process's
 * alone), which fsbench, with its watchdog, signal and sampling threads, always pays.
 * Prints "<ops/s> <KiB/s>". Used by matrix-vs-fio.sh. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *beside(void *unused) {
    (void)unused;
    struct timespec step = {0, 10 * 1000 * 1000};
    for (;;) nanosleep(&step, NULL);
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 5 && argc != 6) {
        fprintf(stderr, "usage: %s read|write FILE BLOCK_BYTES SECONDS [OFFSET]\n", argv[0]);
        return 2;
    }
    size_t offset = argc == 6 ? strtoul(argv[5], NULL, 10) : 16;
    if (offset >= 4096) { fprintf(stderr, "OFFSET must be below 4096\n"); return 2; }
    int writing = strcmp(argv[1], "write") == 0;
    size_t bs = strtoul(argv[3], NULL, 10);
    double seconds = atof(argv[4]);
    int fd = open(argv[2], writing ? O_WRONLY : O_RDONLY);
    if (fd < 0) { perror("open"); return 1; }
    struct stat st;
    fstat(fd, &st);
    off_t size = st.st_size - st.st_size % bs;
    const char *fresh = getenv("FRESH");
    if (writing && fresh && strcmp(fresh, "1") == 0) {
        enum { POOL = 256 << 10 };
        char *pool;
        if (bs > POOL || posix_memalign((void **)&pool, 4096, POOL)) return 1;
        FILE *r = fopen("/dev/urandom", "r");
        if (!r || fread(pool, 1, POOL, r) != POOL) return 1;
        fclose(r);
        close(fd);
        if (unlink(argv[2]) != 0) { perror("unlink"); return 1; }
        fd = open(argv[2], O_WRONLY | O_CREAT | O_EXCL, 0644);
        if (fd < 0) { perror("open"); return 1; }
        for (off_t at = 0; at < size; at += bs)
            if (pwrite(fd, pool + at % (POOL - POOL % bs), bs, at) != (ssize_t)bs) { perror("fresh"); return 1; }
        free(pool);
    }
    const char *threads = getenv("THREADS");
    pthread_t watchdog;
    if (threads && strcmp(threads, "1") == 0 && pthread_create(&watchdog, NULL, beside, NULL) != 0) {
        fprintf(stderr, "pthread_create failed\n");
        return 1;
    }
    char *page;
    if (posix_memalign((void **)&page, 4096, bs + 4096)) return 1;
    char *buf = page + offset;
    FILE *urandom = fopen("/dev/urandom", "r");
    if (!urandom || fread(buf, 1, bs, urandom) != bs) return 1;
    fclose(urandom);
    unsigned long long ops = 0;
    off_t off = 0;
    double start = now(), end;
    for (;;) {
        for (int i = 0; i < 4096; i++) {
            ssize_t n = writing ? pwrite(fd, buf, bs, off) : pread(fd, buf, bs, off);
            if (n != (ssize_t)bs) { perror("io"); return 1; }
            off += bs;
            if (off >= size) off = 0;
        }
        ops += 4096;
        end = now();
        if (end - start >= seconds) break;
    }
    double elapsed = end - start;
    printf("%.1f %.1f\n", ops / elapsed, ops * (double)bs / 1024.0 / elapsed);
    return 0;
}
