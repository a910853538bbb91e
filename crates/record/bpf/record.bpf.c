// The kernel half of `fsbench record`: on the sys_enter and sys_exit raw tracepoints, the
// file-system calls of the traced thread groups are captured (arguments and path strings at
// entry, sent up at once; the return value at exit, sent up after it) through one ring
// buffer; the sched tracepoints keep the set of traced processes (a traced process's children
// are traced from their fork on) and report execs. Nothing is dropped silently: a full ring
// buffer or table is counted in `counts`.
//
// Built by build.rs with `clang -O2 -g -target bpf`; no libbpf headers: the few helpers, map
// macros and tracepoint layouts it needs are declared here. The record layouts are mirrored in
// src/raw.rs: change both together.

typedef unsigned char u8;
typedef unsigned int u32;
typedef int s32;
typedef unsigned long long u64;
typedef long long s64;

#define SEC(name) __attribute__((section(name), used))
#define __uint(name, val) int(*name)[val]
#define __type(name, val) typeof(val) *name

#define BPF_MAP_TYPE_HASH 1
#define BPF_MAP_TYPE_ARRAY 2
#define BPF_MAP_TYPE_PERCPU_ARRAY 6
#define BPF_MAP_TYPE_LRU_HASH 9
#define BPF_MAP_TYPE_RINGBUF 27
#define BPF_F_NO_PREALLOC 1
#define BPF_ANY 0
#define BPF_NOEXIST 1

static void *(*bpf_map_lookup_elem)(void *map, const void *key) = (void *)1;
static long (*bpf_map_update_elem)(void *map, const void *key, const void *value,
                                   u64 flags) = (void *)2;
static long (*bpf_map_delete_elem)(void *map, const void *key) = (void *)3;
static u64 (*bpf_ktime_get_ns)(void) = (void *)5;
static u64 (*bpf_get_current_pid_tgid)(void) = (void *)14;
static long (*bpf_probe_read_user)(void *dst, u32 size, const void *unsafe_ptr) = (void *)112;
static long (*bpf_probe_read_kernel)(void *dst, u32 size, const void *unsafe_ptr) = (void *)113;
static long (*bpf_probe_read_user_str)(void *dst, u32 size,
                                       const void *unsafe_ptr) = (void *)114;
static long (*bpf_ringbuf_output)(void *ringbuf, void *data, u64 size, u64 flags) = (void *)130;
static u64 (*bpf_ringbuf_query)(void *ringbuf, u64 flags) = (void *)134;

#define BPF_RB_NO_WAKEUP 1
#define BPF_RB_FORCE_WAKEUP 2
#define BPF_RB_AVAIL_DATA 0
#define BPF_RB_RING_SIZE 1

// The system-call hooks are raw tracepoints (`raw_tp/sys_enter`, `raw_tp/sys_exit`): the kernel
// calls the program with its own arguments — the task's saved registers and the call's number
// (at exit: its return value) — without first building a perf record of them, as a classic
// tracepoint does for every call of every process while it is attached. The registers are read
// where x86_64's `struct pt_regs` keeps them (arch/x86/include/asm/ptrace.h; the recorder is
// x86_64 only): from r10 (byte 56) to orig_ax (byte 120), one read.
#define REGS_FROM 56
struct regs_tail {
    u64 r10, r9, r8, ax, cx, dx, si, di, orig_ax;
};
#define REGS_ORIG_AX 120

#define PATH_MAX_BYTES 1024
#define NR_SYSCALLS 512
#define NO_ARG 255

// Record kinds.
#define KIND_CALL 1
#define KIND_PATH_CALL 2
#define KIND_EXEC 3
#define KIND_FAULT_WAIT 4  // a wait for I/O in a page fault between calls (see `sched_switch`)
#define KIND_EXIT 5        // a call's end (`struct call_exit`), after its KIND_CALL or KIND_PATH_CALL
#define KIND_EXIT_PATHS 6  // the same, with the paths the entry could not read

// Record flags.
#define FLAG_EXTRA 1      // `extra` holds a value read at entry (clone3 flags, the iovec sum)
#define FLAG_TRUNCATED 2  // a path was longer than the buffer
#define FLAG_PATH1_FAULT 4
#define FLAG_PATH2_FAULT 8

// Special argument handling, per system call.
#define SPECIAL_CLONE3 1   // extra = clone_args.flags
#define SPECIAL_IOVEC 2    // extra = the sum of the iovec's lengths (args[1], args[2] <= 8)
#define SPECIAL_OPENAT2 3  // extra = open_how.flags, extra2 = open_how.mode
#define SPECIAL_FIOCLEX 4  // ioctl: only FIONCLEX and FIOCLEX (close-on-exec) are kept

#define FIONCLEX 0x5450
#define FIOCLEX 0x5451

#define CLONE_THREAD 0x00010000ULL

// Counters (the `counts` array).
#define COUNT_LOST 0          // a full ring buffer
#define COUNT_TABLE_FULL 1    // a full table of traced threads or of traced processes
#define COUNT_TRUNCATED 2     // paths longer than the buffer

struct call {
    u32 kind;
    u32 nr;
    u32 pid;
    u32 tid;
    u64 enter_ns;
    u64 exit_ns;
    s64 ret;
    u64 args[6];
    u64 extra;
    u64 extra2;
    u32 flags;
    s32 len1;
    s32 len2;
    u32 pad;
    // The last traced thread that woke this one (0: none), and when (see `sched_waking`).
    u32 waker_tid;
    // Nanoseconds this recorder's own probes took on the thread since its previous recorded
    // call ended: that call's exit probe after its timestamp, and this call's entry probe
    // before its own. Time the application did not spend; the replay leaves it out of the
    // think time.
    u32 probe_ns;
    u64 woken_ns;
};

struct path_call {
    struct call call;
    // The first path's bytes (with its NUL), then the second's right after: only the bytes
    // used are sent up (a record is `struct call` and len1 + len2 bytes).
    char paths[2 * PATH_MAX_BYTES];
};

// A call's end, sent at exit after the call record sent at entry (the thread's next record of
// a call: user space pairs them by thread).
struct call_exit {
    u32 kind;
    u32 nr;
    u32 pid;
    u32 tid;
    u64 exit_ns;
    s64 ret;
    u32 flags;
    s32 len1;
    s32 len2;
    u32 pad;
};

// A call's end with the paths read again (KIND_EXIT_PATHS): len1 + len2 bytes follow.
struct path_exit {
    struct call_exit exit;
    char paths[2 * PATH_MAX_BYTES];
};

struct conf {
    u8 want;
    u8 path_a;
    u8 path_b;
    u8 special;
};

// Where the sched tracepoints keep their fields on this kernel (read by user space from the
// events' format files, set before loading): constants the verifier sees, so only the branch
// for this kernel's layout is checked (reading past a record's end is refused at attach).
volatile const u32 FORK_CHILD_PID_OFFSET = 20;
volatile const u32 EXIT_GROUP_DEAD_OFFSET = 32;
volatile const u32 SWITCH_PREV_PID_OFFSET = 24;
volatile const u32 SWITCH_PREV_STATE_OFFSET = 32;
volatile const u32 SWITCH_NEXT_PID_OFFSET = 56;
volatile const u32 WAKING_PID_OFFSET = 24;
volatile const u32 FAULT_ADDRESS_OFFSET = 8;
// The ring buffer's size in bytes (set with its max_entries).
volatile const u64 RING_BYTES = 64 << 20;

// TASK_UNINTERRUPTIBLE: how a thread waits for a page being read (io_schedule), in
// sched_switch's prev_state.
#define TASK_INTERRUPTIBLE 1
#define TASK_UNINTERRUPTIBLE 2

struct {
    __uint(type, BPF_MAP_TYPE_RINGBUF);
    __uint(max_entries, 64 << 20);
} events SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, 65536);
    __type(key, u32);
    __type(value, u8);
} traced SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, NR_SYSCALLS);
    __type(key, u32);
    __type(value, struct conf);
} conf SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, 4);
    __type(key, u32);
    __type(value, u64);
} counts SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, 1);
    __type(key, u32);
    __type(value, struct path_call);
} scratch SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, 1);
    __type(key, u32);
    __type(value, struct path_exit);
} exit_scratch SEC(".maps");

// Per traced thread: when it last went off the CPU waiting for I/O in a page fault outside a
// recorded call (0: it did not), and the fault's address; whether it is asleep (interruptibly)
// outside a call now.
struct offcpu {
    u64 since;
    u64 since_addr;
    // Switched out asleep (TASK_INTERRUPTIBLE), not yet run again: waiting for another thread
    // (a pipe, a child, a lock) or a timer.
    u64 asleep;
    // When its latest page fault began, and where: a wait for I/O soon after is that fault's,
    // and counts from there (the fault's work before the wait — the page cache looked up, the
    // read submitted — is the filesystem's too); a later wait in the same window counts from
    // its own start (`fault_waited`).
    u64 fault_at;
    u64 fault_addr;
    u64 fault_waited;
    // The thread's process (for the records of its waits, sent from another thread's context).
    u64 tgid;
    // The time the probes of its recorded calls took after the last call's timestamp (its exit
    // probe's work: the record sent up), for the next call's `probe_ns`.
    u64 probe;
    // In a recorded call (its entry sent up, its exit not yet): what the exit probe sends and
    // sched_switch counts as the call's own time.
    u8 in_call;
    // The call's entry could not read a path: the exit reads it again.
    u8 path_fault;
    u8 pad[6];
    // The flags of the clone or clone3 call in progress (0 for other calls), for process_fork.
    u64 clone_flags;
    // The last thread that woke it from an interruptible sleep (any thread: the replay ignores
    // a waker the trace does not have), and when (`sched_waking`; 0: none yet).
    u32 waker_tid;
    u32 pad2;
    u64 woken_at;
};

// How long before a wait for I/O a fault may have begun and still be taken for its cause.
#define FAULT_WAIT_WINDOW_NS 2000000ULL

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __uint(max_entries, 65536);
    __type(key, u32);
    __type(value, struct offcpu);
} offcpu SEC(".maps");

// Per CPU: how deep in interrupt context it is (a hard interrupt's handler, a softirq, a
// timer's callback). A wakeup there is the interrupt's doing — a timer's expiry, a packet —
// not the doing of the thread it interrupted, which is `current` (`sched_waking`).
struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, 1);
    __type(key, u32);
    __type(value, u32);
} irq_depth SEC(".maps");

// Waking the reader for every record would cost the traced application a wakeup per call: the
// reader is woken only once the buffer is an eighth full, and otherwise reads on its own
// timer.
static __attribute__((always_inline)) long emit(void *data, u64 size) {
    u64 flags = BPF_RB_NO_WAKEUP;
    if (bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) > RING_BYTES / 8)
        flags = BPF_RB_FORCE_WAKEUP;
    return bpf_ringbuf_output(&events, data, size, flags);
}

static __attribute__((always_inline)) void count(u32 which) {
    u64 *n = bpf_map_lookup_elem(&counts, &which);
    if (n)
        __sync_fetch_and_add(n, 1);
}

// A traced thread's entry in `offcpu`, made (zeroed) on first use; null when the table is full
// (counted).
static __attribute__((always_inline)) struct offcpu *offcpu_entry(u32 tid) {
    struct offcpu *o = bpf_map_lookup_elem(&offcpu, &tid);
    if (o)
        return o;
    struct offcpu zero;
    __builtin_memset(&zero, 0, sizeof(zero));
    bpf_map_update_elem(&offcpu, &tid, &zero, BPF_NOEXIST);
    o = bpf_map_lookup_elem(&offcpu, &tid);
    if (!o)
        count(COUNT_TABLE_FULL);
    return o;
}

// Copies a user string; returns its length with the NUL, or -1 when it cannot be read. A
// string that fills the buffer is checked one byte further: truncation is flagged, never a
// silently shorter path.
static __attribute__((always_inline)) s32 read_path(char *dst, u64 ptr, u32 *flags, u32 fault) {
    long n = bpf_probe_read_user_str(dst, PATH_MAX_BYTES, (const void *)ptr);
    if (n < 0) {
        *flags |= fault;
        return -1;
    }
    if (n == PATH_MAX_BYTES) {
        char next = 0;
        if (bpf_probe_read_user(&next, 1, (const void *)(ptr + PATH_MAX_BYTES - 1)) == 0 &&
            next != 0) {
            *flags |= FLAG_TRUNCATED;
            count(COUNT_TRUNCATED);
        }
    }
    return (s32)n;
}

// Copies the call's path arguments into `r->paths` (the first, then the second right after it).
static __attribute__((always_inline)) void read_paths(struct path_call *r, u8 path_a, u8 path_b) {
    struct call *h = &r->call;
    if (path_a != NO_ARG && path_a < 6) {
        s32 len1 = read_path(r->paths, h->args[path_a], &h->flags, FLAG_PATH1_FAULT);
        h->len1 = len1;
        if (path_b != NO_ARG && path_b < 6) {
            u32 at = len1 > 0 ? (u32)len1 : 0;
            if (at > PATH_MAX_BYTES)
                at = PATH_MAX_BYTES;
            h->len2 = read_path(r->paths + at, h->args[path_b], &h->flags, FLAG_PATH2_FAULT);
        }
    }
}

// Argument `i` of the call from its saved registers.
static __attribute__((always_inline)) u64 reg_arg(const struct regs_tail *r, u8 i) {
    switch (i) {
    case 0:
        return r->di;
    case 1:
        return r->si;
    case 2:
        return r->dx;
    case 3:
        return r->r10;
    case 4:
        return r->r8;
    default:
        return r->r9;
    }
}

// Copies the call's path arguments into `e->paths` at exit, as `read_paths` at entry.
static __attribute__((always_inline)) void read_exit_paths(struct path_exit *e,
                                                           const struct regs_tail *regs,
                                                           u8 path_a, u8 path_b) {
    if (path_a != NO_ARG && path_a < 6) {
        s32 len1 = read_path(e->paths, reg_arg(regs, path_a), &e->exit.flags, FLAG_PATH1_FAULT);
        e->exit.len1 = len1;
        if (path_b != NO_ARG && path_b < 6) {
            u32 at = len1 > 0 ? (u32)len1 : 0;
            if (at > PATH_MAX_BYTES)
                at = PATH_MAX_BYTES;
            e->exit.len2 =
                read_path(e->paths + at, reg_arg(regs, path_b), &e->exit.flags, FLAG_PATH2_FAULT);
        }
    }
}

SEC("raw_tp/sys_enter")
int sys_enter(u64 *ctx) {
    s64 id = (s64)ctx[1];
    if (id < 0 || id >= NR_SYSCALLS)
        return 0;
    u32 nr = (u32)id;
    struct conf *c = bpf_map_lookup_elem(&conf, &nr);
    if (!c || !c->want)
        return 0;
    u64 pid_tgid = bpf_get_current_pid_tgid();
    u32 tgid = pid_tgid >> 32;
    u32 tid = (u32)pid_tgid;
    if (!bpf_map_lookup_elem(&traced, &tgid))
        return 0;
    u64 began = bpf_ktime_get_ns();
    struct regs_tail regs;
    if (bpf_probe_read_kernel(&regs, sizeof(regs), (const void *)(ctx[0] + REGS_FROM)) != 0)
        return 0;
    if (c->special == SPECIAL_FIOCLEX && (u32)regs.si != FIONCLEX && (u32)regs.si != FIOCLEX)
        return 0;
    struct offcpu *o = offcpu_entry(tid);
    if (!o)
        return 0;
    u8 path_a = c->path_a, path_b = c->path_b, special = c->special;
    u32 zero = 0;
    struct path_call *r = bpf_map_lookup_elem(&scratch, &zero);
    if (!r)
        return 0;
    struct call *h = &r->call;
    h->kind = path_a == NO_ARG ? KIND_CALL : KIND_PATH_CALL;
    h->nr = nr;
    h->pid = tgid;
    h->tid = tid;
    h->exit_ns = 0;
    h->ret = 0;
    h->args[0] = regs.di;
    h->args[1] = regs.si;
    h->args[2] = regs.dx;
    h->args[3] = regs.r10;
    h->args[4] = regs.r8;
    h->args[5] = regs.r9;
    h->extra = 0;
    h->extra2 = 0;
    h->flags = 0;
    h->len1 = 0;
    h->len2 = 0;
    h->pad = 0;
    u64 probe = o->probe;
    o->probe = 0;
    // Whatever fault came before has ended: a later wait is not its.
    o->fault_at = 0;
    o->fault_waited = 0;
    // The thread's latest wakeup, kept (user space tells a new one from one it has seen, and
    // follows a waker that only passed data on back to what woke it).
    h->waker_tid = o->waker_tid;
    h->woken_ns = o->woken_at;
    if (special == SPECIAL_CLONE3) {
        u64 flags = 0;
        if (bpf_probe_read_user(&flags, 8, (const void *)h->args[0]) == 0) {
            h->extra = flags;
            h->flags |= FLAG_EXTRA;
        }
    } else if (special == SPECIAL_OPENAT2) {
        u64 how[2] = {0, 0};
        if (bpf_probe_read_user(how, 16, (const void *)h->args[2]) == 0) {
            h->extra = how[0];
            h->extra2 = how[1];
            h->flags |= FLAG_EXTRA;
        }
    } else if (special == SPECIAL_IOVEC) {
        u64 cnt = h->args[2];
        u64 iov = h->args[1];
        if (cnt <= 8) {
            u64 sum = 0;
            int ok = 1;
#pragma unroll
            for (int i = 0; i < 8; i++) {
                if (i < cnt) {
                    u64 len = 0;
                    if (bpf_probe_read_user(&len, 8, (const void *)(iov + i * 16 + 8)) != 0)
                        ok = 0;
                    sum += len;
                }
            }
            if (ok) {
                h->extra = sum;
                h->flags |= FLAG_EXTRA;
            }
        }
    }
    // A new thread's flags, for process_fork (which runs inside this call).
    o->clone_flags = 0;
    if (nr == 56)
        o->clone_flags = h->args[0];
    else if (special == SPECIAL_CLONE3 && (h->flags & FLAG_EXTRA))
        o->clone_flags = h->extra;
    read_paths(r, path_a, path_b);
    h->enter_ns = bpf_ktime_get_ns();
    probe += h->enter_ns - began;
    h->probe_ns = probe > 0xffffffffULL ? 0xffffffffU : (u32)probe;
    // The call goes up now, its end at exit (`struct call_exit`): no table of calls in
    // progress to fill, look up and empty on every call.
    u64 size = sizeof(struct call);
    if (h->kind == KIND_PATH_CALL) {
        if (h->len1 > 0)
            size += (u32)h->len1 & (PATH_MAX_BYTES * 2 - 1);
        if (h->len2 > 0)
            size += (u32)h->len2 & (PATH_MAX_BYTES * 2 - 1);
        if (size > sizeof(*r))
            size = sizeof(*r);
    }
    if (emit(r, size)) {
        count(COUNT_LOST);
        return 0;
    }
    o->in_call = 1;
    // A path in a page the process had not touched yet (a fresh file mapping, a page swapped
    // out) cannot be read at entry, where nothing may fault: read again at exit.
    o->path_fault = (h->flags & (FLAG_PATH1_FAULT | FLAG_PATH2_FAULT)) != 0;
    return 0;
}

SEC("raw_tp/sys_exit")
int sys_exit(u64 *ctx) {
    s64 id = -1;
    if (bpf_probe_read_kernel(&id, sizeof(id), (const void *)(ctx[0] + REGS_ORIG_AX)) != 0)
        return 0;
    s64 ret = (s64)ctx[1];
    if (id < 0 || id >= NR_SYSCALLS)
        return 0;
    u32 nr = (u32)id;
    struct conf *c = bpf_map_lookup_elem(&conf, &nr);
    if (!c || !c->want)
        return 0;
    u64 now = bpf_ktime_get_ns();
    u64 pid_tgid = bpf_get_current_pid_tgid();
    u32 tid = (u32)pid_tgid;
    struct offcpu *o = bpf_map_lookup_elem(&offcpu, &tid);
    if (!o || !o->in_call)
        return 0;
    o->in_call = 0;
    u32 zero = 0;
    struct path_exit *e = bpf_map_lookup_elem(&exit_scratch, &zero);
    if (!e)
        return 0;
    e->exit.kind = KIND_EXIT;
    e->exit.nr = nr;
    e->exit.pid = pid_tgid >> 32;
    e->exit.tid = tid;
    e->exit.exit_ns = now;
    e->exit.ret = ret;
    e->exit.flags = 0;
    e->exit.len1 = 0;
    e->exit.len2 = 0;
    e->exit.pad = 0;
    u64 size = sizeof(struct call_exit);
    // The entry could not read a path: the call itself has faulted its page in by now (user
    // space refuses a call whose path stays unreadable, unless the call failed with EFAULT).
    // The arguments are still in the saved registers.
    if (o->path_fault && ret != -14) {
        struct regs_tail regs;
        if (bpf_probe_read_kernel(&regs, sizeof(regs), (const void *)(ctx[0] + REGS_FROM)) == 0) {
            e->exit.kind = KIND_EXIT_PATHS;
            read_exit_paths(e, &regs, c->path_a, c->path_b);
            if (e->exit.len1 > 0)
                size += (u32)e->exit.len1 & (PATH_MAX_BYTES * 2 - 1);
            if (e->exit.len2 > 0)
                size += (u32)e->exit.len2 & (PATH_MAX_BYTES * 2 - 1);
            if (size > sizeof(*e))
                size = sizeof(*e);
        }
    }
    if (emit(e, size))
        count(COUNT_LOST);
    // This probe's work after the call's timestamp, for the thread's next call.
    o->probe += bpf_ktime_get_ns() - now;
    return 0;
}

SEC("tracepoint/sched/sched_process_fork")
int process_fork(void *ctx) {
    u64 pid_tgid = bpf_get_current_pid_tgid();
    u32 tgid = pid_tgid >> 32;
    u32 tid = (u32)pid_tgid;
    if (!bpf_map_lookup_elem(&traced, &tgid))
        return 0;
    // A new thread of a traced process is traced already (by its thread group).
    struct offcpu *o = bpf_map_lookup_elem(&offcpu, &tid);
    if (o && o->in_call && (o->clone_flags & CLONE_THREAD))
        return 0;
    s32 child;
    // Two layouts: 6.x with __data_loc comms (child_pid at 20), before (child_pid at 44, read as
    // the upper half of a 64-bit load so that the compiler cannot merge the two loads into one
    // at a computed offset, which the verifier refuses for the context).
    if (FORK_CHILD_PID_OFFSET == 20)
        child = *(s32 *)((char *)ctx + 20);
    else if (FORK_CHILD_PID_OFFSET == 44)
        child = (s32)(*(u64 *)((char *)ctx + 40) >> 32);
    else
        return 0;
    if (child <= 0)
        return 0;
    u32 key = (u32)child;
    u8 one = 1;
    if (bpf_map_update_elem(&traced, &key, &one, BPF_ANY))
        count(COUNT_TABLE_FULL);
    return 0;
}

SEC("tracepoint/sched/sched_process_exec")
int process_exec(void *ctx) {
    u64 pid_tgid = bpf_get_current_pid_tgid();
    u32 tgid = pid_tgid >> 32;
    if (!bpf_map_lookup_elem(&traced, &tgid))
        return 0;
    u32 zero = 0;
    struct path_call *r = bpf_map_lookup_elem(&scratch, &zero);
    if (!r)
        return 0;
    struct call *h = &r->call;
    __builtin_memset(h, 0, sizeof(*h));
    h->kind = KIND_EXEC;
    h->nr = 59;
    h->pid = tgid;
    h->tid = (u32)pid_tgid;
    h->enter_ns = bpf_ktime_get_ns();
    h->exit_ns = h->enter_ns;
    if (emit(h, sizeof(*h)))
        count(COUNT_LOST);
    return 0;
}

SEC("tracepoint/sched/sched_process_exit")
int process_exit(void *ctx) {
    u64 pid_tgid = bpf_get_current_pid_tgid();
    u32 tgid = pid_tgid >> 32;
    u32 tid = (u32)pid_tgid;
    if (!bpf_map_lookup_elem(&traced, &tgid))
        return 0;
    bpf_map_delete_elem(&offcpu, &tid);
    // The whole process ends: with group_dead where the kernel has it, else when its leader
    // does.
    int group_dead;
    if (EXIT_GROUP_DEAD_OFFSET == 32)
        group_dead = *((u8 *)ctx + 32);
    else
        group_dead = tid == tgid;
    if (group_dead)
        bpf_map_delete_elem(&traced, &tgid);
    return 0;
}

// The time a traced thread waits for I/O in page faults between its recorded calls, which the
// recorded calls do not show but which the think time between them holds: one record per wait
// (KIND_FAULT_WAIT: when the fault began, when the thread ran again, the fault's address).
// User space keeps the waits in mappings of files inside the root (the replay reads those
// pages itself, on the filesystem under test, and leaves the recorded wait out of the think
// time: docs/workloads/replay.md); a wait for a program's or library's page outside it stays
// think time, as the replay cannot take it. Counted from a switch away in
// TASK_UNINTERRUPTIBLE, outside a recorded call, up to 2 ms after a fault began (or after its
// previous wait ended) and with no recorded call since, to the thread's next switch in; runs in
// the context of the thread switched away from.
//
// Two ways in, one logic (`on_switch`): the raw tracepoint (the kernel's own arguments, no perf
// record built first: on every context switch of the whole system, so the cheaper where the
// kernel has it) and the classic one (a kernel without BTF, or before 5.18, whose raw
// tracepoint has no prev_state); probe.rs attaches one of the two. `state` as the classic
// tracepoint reports it: TASK_INTERRUPTIBLE, TASK_UNINTERRUPTIBLE, or neither.
static __attribute__((always_inline)) int on_switch(u32 next, long state) {
    // Read only when needed: most switches are of threads the recording does not trace.
    u64 now = 0;
    // A switch is never in interrupt context: a depth left above 0 is an exit whose program
    // the kernel skipped (a program already running on this CPU is not run again: an
    // interrupt during irq_leave on softirq_exit), and would drop every wakeup here for good.
    u32 zero_key = 0;
    u32 *depth = bpf_map_lookup_elem(&irq_depth, &zero_key);
    if (depth)
        *depth = 0;
    struct offcpu *n = bpf_map_lookup_elem(&offcpu, &next);
    if (n) {
        if (n->since) {
            now = bpf_ktime_get_ns();
            struct call w;
            __builtin_memset(&w, 0, sizeof(w));
            w.kind = KIND_FAULT_WAIT;
            w.pid = (u32)n->tgid;
            w.tid = next;
            w.enter_ns = n->since;
            w.exit_ns = now;
            w.args[0] = n->since_addr;
            if (emit(&w, sizeof(w)))
                count(COUNT_LOST);
            n->since = 0;
            // A fault may wait more than once: its next wait may come up to the window after
            // this one ended, however long this one was.
            if (n->fault_at)
                n->fault_at = now;
        }
        n->asleep = 0;
    }
    u64 pid_tgid = bpf_get_current_pid_tgid();
    u32 tgid = pid_tgid >> 32;
    u32 tid = (u32)pid_tgid;
    if (tid == 0 || !bpf_map_lookup_elem(&traced, &tgid))
        return 0;
    int blocked = (state & TASK_UNINTERRUPTIBLE) != 0;
    int asleep = (state & TASK_INTERRUPTIBLE) != 0;
    // Inside a recorded call an I/O wait is the call's own time. A sleep there is still one a
    // wakeup ends: the call may be a read of a pipe, which the trace leaves out (outside the
    // root), and what woke it goes with the thread's next call in the trace.
    if (!blocked && !asleep)
        return 0;
    struct offcpu *o = offcpu_entry(tid);
    if (!o)
        return 0;
    if (o->in_call)
        blocked = 0;
    if (!blocked && !asleep)
        return 0;
    // A wait with no fault before it (an exec reading its program, a lock) stays think time.
    if (blocked && o->fault_at && !now)
        now = bpf_ktime_get_ns();
    if (blocked && o->fault_at && now - o->fault_at < FAULT_WAIT_WINDOW_NS) {
        o->since = o->fault_waited ? now : o->fault_at;
        o->since_addr = o->fault_addr;
        o->fault_waited = 1;
        o->tgid = tgid;
    }
    o->asleep = asleep;
    return 0;
}

SEC("tracepoint/sched/sched_switch")
int sched_switch(void *ctx) {
    if (SWITCH_PREV_PID_OFFSET != 24 || SWITCH_PREV_STATE_OFFSET != 32 || SWITCH_NEXT_PID_OFFSET != 56) {
        u32 zero_key = 0;
        u32 *depth = bpf_map_lookup_elem(&irq_depth, &zero_key);
        if (depth)
            *depth = 0;
        return 0;
    }
    return on_switch((u32)*(s32 *)((char *)ctx + 56), *(long *)((char *)ctx + 32));
}

// The task fields the raw tracepoints read, at the offsets of the running kernel's BTF: the
// loader relocates each access (CO-RE), and probe.rs uses these programs only where the
// kernel has BTF.
struct task_struct {
    int pid;
} __attribute__((preserve_access_index));

#define TASK_REPORT 0x7f
#define TASK_NOLOAD 0x400
#define TASK_RTLOCK_WAIT 0x1000
#define TASK_FROZEN 0x8000

// sched_switch(bool preempt, struct task_struct *prev, struct task_struct *next,
// unsigned int prev_state) — the fourth argument since Linux 5.18 (an older kernel refuses the
// attach: the classic program is used). The state as the classic tracepoint reports it
// (`__trace_sched_switch_state`, `task_state_index`): a preempted thread is running; an idle
// wait (TASK_UNINTERRUPTIBLE | TASK_NOLOAD) is neither; a frozen thread or one waiting for an
// rtlock is uninterruptible; otherwise TASK_INTERRUPTIBLE or TASK_UNINTERRUPTIBLE alone of the
// reported bits. (The classic one also ORs in `exit_state`: a thread that has already exited
// and still blocks is neither there, and may count as blocked here.)
SEC("raw_tp/sched_switch")
int sched_switch_raw(u64 *ctx) {
    struct task_struct *next = (struct task_struct *)ctx[2];
    int pid = 0;
    bpf_probe_read_kernel(&pid, sizeof(pid), &next->pid);
    u32 raw = (u32)ctx[3];
    long state = 0;
    if (!(u8)ctx[0] && (raw & (TASK_UNINTERRUPTIBLE | TASK_NOLOAD)) != (TASK_UNINTERRUPTIBLE | TASK_NOLOAD)) {
        if (raw & (TASK_RTLOCK_WAIT | TASK_FROZEN)) {
            state = TASK_UNINTERRUPTIBLE;
        } else {
            raw &= TASK_REPORT;
            if (raw == TASK_INTERRUPTIBLE || raw == TASK_UNINTERRUPTIBLE)
                state = raw;
        }
    }
    return on_switch((u32)pid, state);
}

// A page fault of a traced thread's: when it began and where, for the wait for I/O that may
// follow (`sched_switch`).
// Every user page fault of the system: raw (page_fault_user(unsigned long address,
// struct pt_regs *regs, unsigned long error_code)) or classic, attached as sched_switch's.
static __attribute__((always_inline)) int on_fault(u64 address) {
    u64 pid_tgid = bpf_get_current_pid_tgid();
    u32 tgid = pid_tgid >> 32;
    if (!bpf_map_lookup_elem(&traced, &tgid))
        return 0;
    u32 tid = (u32)pid_tgid;
    struct offcpu *o = offcpu_entry(tid);
    if (o) {
        o->fault_at = bpf_ktime_get_ns();
        o->fault_addr = address;
        o->fault_waited = 0;
    }
    return 0;
}

SEC("tracepoint/exceptions/page_fault_user")
int page_fault_user(void *ctx) {
    if (FAULT_ADDRESS_OFFSET != 8)
        return 0;
    return on_fault(*(u64 *)((char *)ctx + 8));
}

SEC("raw_tp/page_fault_user")
int page_fault_user_raw(u64 *ctx) {
    return on_fault(ctx[0]);
}

// Entering and leaving interrupt context (raw tracepoints irq_handler_entry/exit,
// softirq_entry/exit, hrtimer_expire_entry/exit; probe.rs attaches each program to the three).
// A recording that began inside one leaves it without having entered: never below 0.
SEC("raw_tp/irq_enter")
int irq_enter(void *ctx) {
    u32 zero = 0;
    u32 *depth = bpf_map_lookup_elem(&irq_depth, &zero);
    if (depth)
        *depth += 1;
    return 0;
}

SEC("raw_tp/irq_leave")
int irq_leave(void *ctx) {
    u32 zero = 0;
    u32 *depth = bpf_map_lookup_elem(&irq_depth, &zero);
    if (depth && *depth > 0)
        *depth -= 1;
    return 0;
}

// A thread waking a traced one that sleeps (interruptibly) — a pipe written, a child's exit, a
// futex released: the woken thread's next recorded call waited for what the waker did, which
// the replay keeps in recorded timing. Only interruptible sleepers (an I/O completion wakes
// threads waiting uninterruptibly), and never from interrupt context (`irq_depth`): a timer's
// expiry or an interrupt runs in whatever thread is on the CPU, which did not wake anyone.
static __attribute__((always_inline)) int on_waking(u32 wakee) {
    // In interrupt context the running thread is not the waker (a timer's expiry, a packet).
    u32 zero = 0;
    u32 *depth = bpf_map_lookup_elem(&irq_depth, &zero);
    if (!depth || *depth > 0)
        return 0;
    // Any waker: a child ending wakes its parent after it has left the traced table
    // (sched_process_exit comes first). The woken thread must be a traced one asleep; a waker
    // the trace does not have is ignored by the replay.
    u32 tid = (u32)bpf_get_current_pid_tgid();
    if (tid == 0)
        return 0;
    if (wakee == tid)
        return 0;
    struct offcpu *o = bpf_map_lookup_elem(&offcpu, &wakee);
    if (!o || !o->asleep)
        return 0;
    o->waker_tid = tid;
    o->woken_at = bpf_ktime_get_ns();
    return 0;
}

// Classic (the woken thread's pid in the record) and raw (sched_waking(struct task_struct *p)),
// attached as sched_switch's.
SEC("tracepoint/sched/sched_waking")
int sched_waking(void *ctx) {
    if (WAKING_PID_OFFSET != 24)
        return 0;
    return on_waking((u32)*(s32 *)((char *)ctx + 24));
}

SEC("raw_tp/sched_waking")
int sched_waking_raw(u64 *ctx) {
    struct task_struct *p = (struct task_struct *)ctx[0];
    int pid = 0;
    if (bpf_probe_read_kernel(&pid, sizeof(pid), &p->pid) != 0)
        return 0;
    return on_waking((u32)pid);
}

char LICENSE[] SEC("license") = "GPL";
